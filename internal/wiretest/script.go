package wiretest

import (
	"fmt"
	"net"

	"github.com/tdsbridge/tdsbridge/internal/loopback"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// ScriptServer is a loopback server whose connections each run a test's script: a peer that
// misbehaves exactly as a test needs. The script owns the conn while it runs; the server
// closes the conn when the script returns.
type ScriptServer struct {
	// Addr is the listening address, "127.0.0.1:port".
	Addr string

	lb *loopback.Server
}

// NewScriptServer starts a server on 127.0.0.1:0 that runs script on every accepted
// connection, each on its own goroutine. The caller must Close it.
func NewScriptServer(script func(c net.Conn)) (*ScriptServer, error) {
	lb, err := loopback.Listen("")
	if err != nil {
		return nil, fmt.Errorf("wiretest: script server: %w", err)
	}
	if err := lb.Serve(func(c net.Conn, _ int) { script(c) }); err != nil {
		_ = lb.Close()
		return nil, fmt.Errorf("wiretest: script server: %w", err)
	}
	return &ScriptServer{Addr: lb.Addr(), lb: lb}, nil
}

// Close stops the listener, closes every connection (which unblocks the scripts) and returns
// when every script has returned. A second Close returns an error matching net.ErrClosed.
func (s *ScriptServer) Close() error {
	if err := s.lb.Close(); err != nil {
		return fmt.Errorf("wiretest: script server: %w", err)
	}
	return nil
}

// ReadClientPrelogin reads the client's PRELOGIN message from c and decodes it.
func ReadClientPrelogin(c net.Conn) (*prelogin.Message, error) {
	rd := tds.NewReader(c, tds.ReaderConfig{Allowed: tds.Types(tds.TypePrelogin), MaxMessageSize: tds.DefaultPacketSize})
	_, payload, err := rd.ReadMessage()
	if err != nil {
		return nil, fmt.Errorf("wiretest: read client PRELOGIN: %w", err)
	}
	m := new(prelogin.Message)
	if err := m.Decode(payload); err != nil {
		return nil, fmt.Errorf("wiretest: decode client PRELOGIN: %w", err)
	}
	return m, nil
}

// PreloginPayload returns a PRELOGIN payload with VERSION and ENCRYPTION e, as a server
// would send it (or as a client, for a client-side exchange).
func PreloginPayload(e prelogin.Encryption) []byte {
	m := prelogin.Message{
		Version: prelogin.Version{Major: 16, Build: 1000}, HasVersion: true,
		Encryption: e, HasEncryption: true,
		Instance: []byte{0}, HasInstance: true,
		HasThreadID: true, ThreadIDEmpty: true,
		HasMARS: true,
	}
	b, err := m.Encode(nil)
	if err != nil {
		// The message above is fixed and valid; Encode cannot fail on it.
		return nil
	}
	return b
}

// Packet returns one whole TDS packet: header (type, status, Length = 8+len(payload), SPID 0,
// PacketID 1) then payload. length, when nonzero, replaces the Length field (to lie about it).
func Packet(typ tds.PacketType, status tds.Status, payload []byte, length int) []byte {
	h := tds.Header{Type: typ, Status: status, Length: uint16(tds.HeaderSize + len(payload)), PacketID: 1}
	if length != 0 {
		h.Length = uint16(length)
	}
	return append(h.Append(nil), payload...)
}

// PreloginReply returns a server's PRELOGIN reply packet (type 0x04, EOM) with ENCRYPTION e.
func PreloginReply(e prelogin.Encryption) []byte {
	return Packet(tds.TypeTabularResult, tds.StatusEOM, PreloginPayload(e), 0)
}
