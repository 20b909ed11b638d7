package tdstest

import (
	"errors"
	"fmt"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// alpnTDS8 is the ALPN protocol of TDS 8.0.
const alpnTDS8 = "tds/8.0"

// serverPreloginVersion is the VERSION the server sends: 16.0.1000.0 (SQL Server 2022).
var serverPreloginVersion = prelogin.Version{Major: 16, Minor: 0, Build: 1000}

// maxPreloginMessage bounds a client's PRELOGIN message (real ones are under 100 bytes).
const maxPreloginMessage = 16 << 10

// preloginReply builds the server's PRELOGIN response to a client's message with ENCRYPTION enc.
// FEDAUTHREQUIRED is answered when the client sent it: 1 when fedAuth (the server takes a
// security token), else 0.
func preloginReply(client *prelogin.Message, enc prelogin.Encryption, fedAuth bool) ([]byte, error) {
	var m prelogin.Message
	m.Version, m.HasVersion = serverPreloginVersion, true
	m.Encryption, m.HasEncryption = enc, true
	m.Instance, m.HasInstance = []byte{0}, true
	m.HasThreadID, m.ThreadIDEmpty = true, true
	m.MARS, m.HasMARS = 0, true
	if client.HasFedAuthRequired {
		m.FedAuthRequired, m.HasFedAuthRequired = 0, true
		if fedAuth {
			m.FedAuthRequired = 1
		}
	}
	b, err := m.Encode(nil)
	if err != nil {
		return nil, fmt.Errorf("tdstest: encode PRELOGIN reply: %w", err)
	}
	return b, nil
}

// readClientPrelogin reads and decodes the client's PRELOGIN message from c.in.
func (c *conn) readClientPrelogin() (*prelogin.Message, error) {
	c.in.SetAllowed(tds.Types(tds.TypePrelogin))
	c.in.SetMaxMessageSize(maxPreloginMessage)
	_, payload, err := c.in.ReadMessage()
	if err != nil {
		return nil, fmt.Errorf("read PRELOGIN: %w", err)
	}
	var m prelogin.Message
	if err := m.Decode(payload); err != nil {
		return nil, fmt.Errorf("decode PRELOGIN: %w", err)
	}
	if !m.HasEncryption {
		return nil, errors.New("client PRELOGIN has no ENCRYPTION option")
	}
	return &m, nil
}
