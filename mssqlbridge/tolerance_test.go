package mssqlbridge

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// babelfishReply is the whole PRELOGIN reply of Babelfish for PostgreSQL 4.2.0 to a client
// that sent ENCRYPTION=ON and a TRACEID, as captured (docs/protocol.md, section "What servers
// written elsewhere send"): TRACEID echoed with length 0, THREADID with length 0.
var babelfishReply = []byte{
	0x04, 0x01, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, // header: tabular result, EOM, length 48, SPID 0, packet 0, window 0
	0x00, 0x00, 0x1F, 0x00, 0x06, // VERSION: data at 31, 6 bytes
	0x01, 0x00, 0x25, 0x00, 0x01, // ENCRYPTION: data at 37, 1 byte
	0x02, 0x00, 0x26, 0x00, 0x01, // INSTOPT: data at 38, 1 byte
	0x03, 0x00, 0x27, 0x00, 0x00, // THREADID: data at 39, 0 bytes
	0x04, 0x00, 0x27, 0x00, 0x01, // MARS: data at 39, 1 byte
	0x05, 0x00, 0x28, 0x00, 0x00, // TRACEID: data at 40 (the payload's end), 0 bytes
	0xFF,                               // TERMINATOR
	0x0C, 0x00, 0x07, 0xD0, 0x00, 0x00, // VERSION: 12.0.2000.0
	0x01, // ENCRYPTION: ON (byte 8+37 of the packet)
	0x00, // INSTOPT: 0 = instance name matched
	0x00, // MARS: off
}

// babelfishEncryptionAt is the offset of the ENCRYPTION byte in babelfishReply.
const babelfishEncryptionAt = tds.HeaderSize + 37

// TestBabelfishReply: go-mssqldb, through the bridge and with its own transport, connects and
// runs SELECT 1 in every encrypt mode Babelfish speaks when the server's PRELOGIN reply is
// Babelfish's, byte for byte. A proxy replaces tdstest's reply (tdstest with encryption OFF
// answers as Babelfish does: ON to ON, OFF to OFF, NOT_SUP to NOT_SUP) by babelfishReply with
// tdstest's ENCRYPTION value; the TLS handshake and the login then run with tdstest. Through
// the bridge the driver reads the reply patched by prelogin.SetReplyEncryption, so this also
// shows that go-mssqldb parses the patched form.
func TestBabelfishReply(t *testing.T) {
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff})
	var replaced atomic.Int32
	proxy, err := wiretest.NewProxy(srv.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir != wiretest.ServerToClient || u.Index != 0 || u.Kind != wiretest.UnitTDS {
			return wiretest.Verdict{Send: u.Bytes}
		}
		enc, err := prelogin.EncryptionOf(u.Bytes[tds.HeaderSize:])
		if err != nil {
			t.Errorf("tdstest's PRELOGIN reply: %v", err)
			return wiretest.Verdict{Send: u.Bytes}
		}
		reply := bytes.Clone(babelfishReply)
		reply[babelfishEncryptionAt] = byte(enc)
		replaced.Add(1)
		return wiretest.Verdict{Send: reply}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	for _, mode := range []string{"disable", "false", "true"} {
		for _, arm := range dbArms {
			t.Run(mode+"/"+arm.name, func(t *testing.T) {
				before := replaced.Load()
				dsn := strings.Replace(srv.DSN("encrypt="+mode, "certificate="+srv.CAFile()), srv.Addr, proxy.Addr, 1)
				db, err := arm.open(t, dsn)
				if err != nil {
					t.Fatal(err)
				}
				if err := selectOne(db); err != nil {
					t.Fatalf("SELECT 1: %v", err)
				}
				if replaced.Load() == before {
					t.Fatal("no PRELOGIN reply went through the proxy")
				}
			})
		}
	}
}
