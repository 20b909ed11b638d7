package reliability

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// afterPrelogin returns a script that reads the client's PRELOGIN and then runs then.
func afterPrelogin(then func(c net.Conn)) func(c net.Conn) {
	return func(c net.Conn) {
		if _, err := wiretest.ReadClientPrelogin(c); err != nil {
			return
		}
		then(c)
	}
}

// write returns a script step that writes each of bs, then stalls until the client goes.
func write(bs ...[]byte) func(c net.Conn) {
	return func(c net.Conn) {
		for _, b := range bs {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
		stall(c)
	}
}

// TestFaultMatrixConnector: PRELOGIN replies that tdstest cannot produce, from a scripted
// server, against the bridged connector through database/sql (encrypt=true). Each must fail
// the connection with ErrMalformedReply (or the framing sentinel) and a message that says what
// was wrong, before any LOGIN7 byte leaves.
func TestFaultMatrixConnector(t *testing.T) {
	t.Parallel()
	reply := wiretest.PreloginPayload(prelogin.EncryptOn)
	noEnc := func() []byte { // a reply with VERSION only
		m := prelogin.Message{Version: prelogin.Version{Major: 16}, HasVersion: true}
		b, _ := m.Encode(nil)
		return b
	}()
	tests := []struct {
		name   string
		script func(c net.Conn)
		params []string
		ctxTO  time.Duration
		is     []error
		msgs   []string
		check  func(t *testing.T, err error)
	}{
		{
			name: "reply-over-limit",
			script: afterPrelogin(func(c net.Conn) {
				// Tabular result packets without EOM, 64 KiB in all (the limit is 4096 bytes).
				p := wiretest.Packet(tds.TypeTabularResult, 0, bytes.Repeat([]byte{0}, 4088), 0)
				for range 16 {
					if _, err := c.Write(p); err != nil {
						return
					}
				}
				stall(c)
			}),
			is:   []error{mssqlbridge.ErrMalformedReply, tds.ErrMessageTooLarge},
			msgs: []string{"malformed PRELOGIN reply"},
		},
		{
			name:   "reply-length-over-packet-size",
			script: afterPrelogin(write(wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, reply, 4097))),
			is:     []error{mssqlbridge.ErrMalformedReply, tds.ErrPacketTooLarge},
			msgs:   []string{"4097 > 4096"},
		},
		{
			name:   "reply-length-below-header",
			script: afterPrelogin(write(wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, reply, 7))),
			is:     []error{mssqlbridge.ErrMalformedReply, tds.ErrShortLength},
		},
		{
			name:   "reply-wrong-type",
			script: afterPrelogin(write(wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, reply, 0))),
			is:     []error{mssqlbridge.ErrMalformedReply, tds.ErrUnexpectedType},
			msgs:   []string{"PRELOGIN"},
		},
		{
			name:   "reply-not-prelogin",
			script: afterPrelogin(write(wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte("HTTP/1.1 400 Bad Request\r\n"), 0))),
			is:     []error{mssqlbridge.ErrMalformedReply},
		},
		{
			name:   "reply-without-encryption",
			script: afterPrelogin(write(wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, noEnc, 0))),
			is:     []error{mssqlbridge.ErrMalformedReply},
			msgs:   []string{"ENCRYPTION"},
		},
		{
			name:   "reply-unknown-encryption",
			script: afterPrelogin(write(wiretest.PreloginReply(prelogin.Encryption(0x20)))),
			is:     []error{mssqlbridge.ErrMalformedReply},
		},
		{
			name:   "close-mid-reply",
			script: afterPrelogin(func(c net.Conn) { _, _ = c.Write(wiretest.PreloginReply(prelogin.EncryptOn)[:20]) }),
			is:     []error{io.ErrUnexpectedEOF},
			msgs:   []string{"PRELOGIN: read PRELOGIN reply: server closed the connection"},
		},
		{
			name:   "alert-after-reply",
			script: afterPrelogin(write(wiretest.PreloginReply(prelogin.EncryptOn), wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}, 0))),
			msgs:   []string{"mssqlbridge: connect 127.0.0.1:", "TLS handshake: ", "remote error: tls: handshake failure"},
		},
		{
			name:   "plaintext-instead-of-handshake",
			script: afterPrelogin(write(wiretest.PreloginReply(prelogin.EncryptOn), wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte{0xFD, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0))),
			msgs:   []string{"mssqlbridge: connect 127.0.0.1:", "TLS handshake: ", "tls: "},
		},
		{
			name:   "silent-after-reply-dial-timeout",
			script: afterPrelogin(write(wiretest.PreloginReply(prelogin.EncryptOn))),
			params: []string{"dial timeout=1"},
			check:  wantTimeout,
		},
		{
			name: "slow-drip-reply-context",
			script: afterPrelogin(func(c net.Conn) {
				for _, b := range wiretest.PreloginReply(prelogin.EncryptOn) {
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				stall(c)
			}),
			ctxTO: 500 * time.Millisecond,
			check: wantTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := scriptServer(t, tt.script)
			dsn := "sqlserver://sa:pw@" + s.Addr + "?encrypt=true&TrustServerCertificate=true"
			for _, p := range tt.params {
				dsn += "&" + p
			}
			db := openBridged(t, dsn)
			to := tt.ctxTO
			if to == 0 {
				to = hangBound
			}
			err := within(t, tt.name, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), to)
				defer cancel()
				return connectAndQuery(ctx, db, "")
			})
			t.Logf("error: %v", err)
			checkErr(t, err, tt.is, tt.msgs...)
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}
