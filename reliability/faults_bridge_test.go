package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/tds"
)

// afterClientHello returns a script that reads the client's first handshake message (the
// ClientHello inside PRELOGIN packets) and then runs then.
func afterClientHello(then func(c net.Conn)) func(c net.Conn) {
	return func(c net.Conn) {
		rd := tds.NewReader(c, tds.ReaderConfig{Allowed: tds.Types(tds.TypePrelogin)})
		if _, _, err := rd.ReadMessage(); err != nil {
			return
		}
		then(c)
	}
}

// stall reads and discards until the peer or the server closes the connection.
func stall(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// TestFaultMatrixHandshake: a server that misbehaves during the TLS handshake inside PRELOGIN
// packets, against the bridge under tls.Client. Every case must fail the handshake with the
// bridge's framing error (or crypto/tls's) wrapped so that errors.Is finds the cause, within a
// bound.
func TestFaultMatrixHandshake(t *testing.T) {
	t.Parallel()
	preloginPacket := func(payload []byte) []byte { return wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, payload, 0) }
	tests := []struct {
		name     string
		script   func(c net.Conn)
		deadline time.Duration // bridge deadline before the handshake (0: none)
		ctxTO    time.Duration // handshake context timeout (0: hangBound)
		is       []error
		msgs     []string
		timeout  bool // the error must be a net.Error timeout
	}{
		{
			name:   "close-before-reply",
			script: afterClientHello(func(net.Conn) {}),
			is:     []error{io.ErrUnexpectedEOF},
			msgs:   []string{"bridge: handshake: read PRELOGIN reply: peer closed the connection"},
		},
		{
			name: "close-mid-packet",
			script: afterClientHello(func(c net.Conn) {
				_, _ = c.Write(wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, make([]byte, 50), 100))
			}),
			is:   []error{tds.ErrTruncatedPacket, io.ErrUnexpectedEOF},
			msgs: []string{"bridge: handshake: read PRELOGIN reply"},
		},
		{
			name: "truncated-server-hello-then-close",
			script: afterClientHello(func(c net.Conn) {
				// A ServerHello record header announcing 80 bytes, and only 6 of them.
				_, _ = c.Write(preloginPacket([]byte{0x16, 0x03, 0x03, 0x00, 0x50, 0x02, 0x00, 0x00, 0x4c, 0x03, 0x03}))
			}),
			is:   []error{io.ErrUnexpectedEOF},
			msgs: []string{"bridge: handshake: read PRELOGIN reply: peer closed the connection"},
		},
		{
			name: "wrong-packet-type",
			script: afterClientHello(func(c net.Conn) {
				_, _ = c.Write(wiretest.Packet(tds.TypeSQLBatch, tds.StatusEOM, []byte{0x16, 0x03, 0x03, 0x00, 0x00}, 0))
			}),
			is:   []error{tds.ErrUnexpectedType},
			msgs: []string{"bridge: handshake: read PRELOGIN reply", "SQLBatch"},
		},
		{
			name: "length-below-header",
			script: afterClientHello(func(c net.Conn) {
				_, _ = c.Write(wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, nil, 4))
				stall(c)
			}),
			is:   []error{tds.ErrShortLength},
			msgs: []string{"bridge: handshake: read PRELOGIN reply", "length 4 < 8"},
		},
		{
			// Handshake packets may be longer than 4096 bytes, but not than TDS allows.
			name: "length-over-packet-size",
			script: afterClientHello(func(c net.Conn) {
				_, _ = c.Write(wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, make([]byte, 100), tds.MaxPacketSize+1))
				stall(c)
			}),
			is:   []error{tds.ErrPacketTooLarge},
			msgs: []string{"bridge: handshake: read PRELOGIN reply"},
		},
		{
			name: "message-over-limit",
			script: afterClientHello(func(c net.Conn) {
				// PRELOGIN packets without EOM, 2 MiB in all: over the reader's 1 MiB limit.
				p := wiretest.Packet(tds.TypePrelogin, 0, bytes.Repeat([]byte{0x16}, tds.DefaultPacketSize-tds.HeaderSize), 0)
				for range 2 << 20 / len(p) {
					if _, err := c.Write(p); err != nil {
						return
					}
				}
				stall(c)
			}),
			is:   []error{tds.ErrMessageTooLarge},
			msgs: []string{"bridge: handshake: read PRELOGIN reply"},
		},
		{
			name: "tls-alert",
			script: afterClientHello(func(c net.Conn) {
				// A fatal handshake_failure alert (level 2, description 40) in a PRELOGIN packet.
				_, _ = c.Write(preloginPacket([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}))
				stall(c)
			}),
			msgs: []string{"remote error: tls: handshake failure"},
		},
		{
			name: "garbage-record",
			script: afterClientHello(func(c net.Conn) {
				_, _ = c.Write(preloginPacket([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")))
				stall(c)
			}),
			msgs: []string{"tls: "},
		},
		{
			name:     "stall-deadline",
			script:   afterClientHello(stall),
			deadline: 300 * time.Millisecond,
			is:       []error{os.ErrDeadlineExceeded},
			msgs:     []string{"bridge: handshake: read PRELOGIN reply"},
			timeout:  true,
		},
		{
			name:   "stall-context",
			script: afterClientHello(stall),
			ctxTO:  300 * time.Millisecond,
			is:     []error{context.DeadlineExceeded},
		},
		{
			name: "slow-drip-deadline",
			script: afterClientHello(func(c net.Conn) {
				// A slowloris: one byte of a valid-looking packet every 20 ms.
				p := wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, bytes.Repeat([]byte{0x16}, 1000), 0)
				for _, b := range p {
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}),
			deadline: 500 * time.Millisecond,
			is:       []error{os.ErrDeadlineExceeded},
			msgs:     []string{"bridge: handshake: read PRELOGIN reply"},
			timeout:  true,
		},
		{
			name: "empty-messages-deadline",
			script: afterClientHello(func(c net.Conn) {
				// Header-only PRELOGIN messages, without end: the bridge skips empty
				// messages, so only the deadline can end the wait.
				empty := wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, nil, 0)
				for {
					if _, err := c.Write(empty); err != nil {
						return
					}
				}
			}),
			deadline: 300 * time.Millisecond,
			is:       []error{os.ErrDeadlineExceeded},
			timeout:  true,
		},
		{
			name: "empty-messages-context",
			script: afterClientHello(func(c net.Conn) {
				empty := wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, nil, 0)
				for {
					if _, err := c.Write(empty); err != nil {
						return
					}
				}
			}),
			ctxTO: 300 * time.Millisecond,
			is:    []error{context.DeadlineExceeded},
		},
		{
			name: "slow-drip-context",
			script: afterClientHello(func(c net.Conn) {
				p := wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, bytes.Repeat([]byte{0x16}, 1000), 0)
				for _, b := range p {
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}),
			ctxTO: 500 * time.Millisecond,
			is:    []error{context.DeadlineExceeded},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := scriptServer(t, tt.script)
			err := within(t, tt.name, func() error {
				to := tt.ctxTO
				if to == 0 {
					to = hangBound
				}
				ctx, cancel := context.WithTimeout(context.Background(), to)
				defer cancel()
				raw, err := net.Dial("tcp", s.Addr)
				if err != nil {
					return err
				}
				b := bridge.New(raw, bridge.Options{Role: bridge.RoleClient})
				defer b.Close()
				if tt.deadline > 0 {
					_ = b.SetDeadline(time.Now().Add(tt.deadline))
				}
				return tls.Client(b, bridge.TLSConfig(clientTLS(t), false)).HandshakeContext(ctx)
			})
			t.Logf("error: %v", err)
			checkErr(t, err, tt.is, tt.msgs...)
			if tt.timeout && !isTimeout(err) {
				t.Errorf("error %q is not a net.Error timeout", err)
			}
		})
	}
}

// TestClientCloseDuringHandshake: Close on the bridge while tls.Client waits for the server's
// reply ends the handshake at once with an error matching net.ErrClosed.
func TestClientCloseDuringHandshake(t *testing.T) {
	t.Parallel()
	got := make(chan struct{})
	s := scriptServer(t, afterClientHello(func(c net.Conn) {
		close(got)
		stall(c)
	}))
	raw, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	b := bridge.New(raw, bridge.Options{Role: bridge.RoleClient})
	done := make(chan error, 1)
	go func() { done <- tls.Client(b, bridge.TLSConfig(clientTLS(t), false)).Handshake() }()
	<-got
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err = within(t, "handshake after Close", func() error { return <-done })
	checkErr(t, err, []error{net.ErrClosed})
	if err := b.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
}

// recordSize is the plaintext size of each record bridgeRecords writes.
const recordSize = 1000

// recordData returns the plaintext of record i: recordSize bytes that differ per record.
func recordData(i int) []byte {
	b := pattern("0123456789abcdefghijklmnopqrstuvwxyz", recordSize)
	b[0], b[1] = byte(i), byte(i>>8)
	return b
}

// bridgeRecords is a bridge server that writes n records (recordData) and then waits for the
// client to close, or closes with close_notify when closeNotify is set.
func bridgeRecords(t *testing.T, n int, closeNotify bool) *wiretest.ScriptServer {
	return bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) {
		for i := range n {
			if _, err := tc.Write(recordData(i)); err != nil {
				return
			}
		}
		if closeNotify {
			_ = tc.Close()
			return
		}
		_, _ = io.Copy(io.Discard, tc)
	})
}

// readAll reads r until an error and returns what it read and the error; it makes one more
// Read after the error and returns that error too (stickiness).
func readAll(r io.Reader) (data []byte, err, again error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		if err != nil {
			_, again = r.Read(buf)
			return data, err, again
		}
	}
}

// TestFaultMatrixPassthrough: faults after the handshake, between a bridge server and a bridge
// client reading through the coalescing bridge.Reader over real TLS, with a proxy that
// corrupts or cuts one of the server's records. Every byte of the records before the fault must
// be delivered, in order, and then the error.
func TestFaultMatrixPassthrough(t *testing.T) {
	t.Parallel()
	const records, bad = 40, 20
	// nthRecord returns a Tamper that applies f to the server's TLS record number k (counting
	// the records after the handshake, which all travel as UnitTLS).
	nthRecord := func(k int, f func(u *wiretest.Unit) wiretest.Verdict) wiretest.Tamper {
		seen := 0
		return func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
			if dir == wiretest.ServerToClient && u.Kind == wiretest.UnitTLS {
				seen++
				if seen == k+1 {
					return f(u)
				}
			}
			return wiretest.Verdict{Send: u.Bytes}
		}
	}
	flip := func(at func(n int) int) func(u *wiretest.Unit) wiretest.Verdict {
		return func(u *wiretest.Unit) wiretest.Verdict {
			u.Bytes[at(len(u.Bytes))] ^= 0x40
			return wiretest.Verdict{Send: u.Bytes}
		}
	}
	tests := []struct {
		name        string
		tamper      wiretest.Tamper
		closeNotify bool
		wantRecords int // records delivered intact before the error
		is          []error
		msgs        []string
		sticky      bool // the next Read fails too
	}{
		{
			name:        "corrupted-record-tag",
			tamper:      nthRecord(bad, flip(func(n int) int { return n - 1 })),
			wantRecords: bad,
			msgs:        []string{"bad record MAC"},
			sticky:      true,
		},
		{
			name:        "corrupted-record-body",
			tamper:      nthRecord(bad, flip(func(n int) int { return n / 2 })),
			wantRecords: bad,
			msgs:        []string{"bad record MAC"},
			sticky:      true,
		},
		{
			name:        "corrupted-first-record",
			tamper:      nthRecord(0, flip(func(n int) int { return n - 1 })),
			wantRecords: 0,
			msgs:        []string{"bad record MAC"},
			sticky:      true,
		},
		{
			name: "corrupted-record-length",
			tamper: nthRecord(bad, func(u *wiretest.Unit) wiretest.Verdict {
				u.Bytes[4]-- // one byte shorter: the MAC check fails on the shortened record
				return wiretest.Verdict{Send: u.Bytes}
			}),
			wantRecords: bad,
			msgs:        []string{"bad record MAC"},
			sticky:      true,
		},
		{
			name: "close-mid-record",
			tamper: nthRecord(bad, func(u *wiretest.Unit) wiretest.Verdict {
				return wiretest.Verdict{Send: u.Bytes[:len(u.Bytes)/2], Close: true}
			}),
			wantRecords: bad,
			is:          []error{io.ErrUnexpectedEOF},
			sticky:      true,
		},
		{
			name: "close-mid-record-header",
			tamper: nthRecord(bad, func(u *wiretest.Unit) wiretest.Verdict {
				return wiretest.Verdict{Send: u.Bytes[:3], Close: true}
			}),
			wantRecords: bad,
			is:          []error{io.ErrUnexpectedEOF},
			sticky:      true,
		},
		{
			name:        "close-notify-after-data",
			tamper:      wiretest.Pass,
			closeNotify: true,
			wantRecords: records,
			is:          []error{io.EOF},
			sticky:      true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := bridgeRecords(t, records, tt.closeNotify)
			p := proxy(t, s.Addr, tt.tamper)
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			defer cancel()
			c, err := dialBridge(ctx, p.Addr, clientTLS(t), bridge.Options{})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.b.Close()
			_ = c.b.SetDeadline(time.Now().Add(hangBound))
			var data []byte
			var again error
			err = within(t, "read", func() error {
				var err error
				data, err, again = readAll(c.r)
				return err
			})
			t.Logf("%d bytes, then error: %v", len(data), err)
			checkErr(t, err, tt.is, tt.msgs...)
			var want []byte
			for i := range tt.wantRecords {
				want = append(want, recordData(i)...)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("got %d bytes before the error, want exactly the %d bytes of the %d records before the fault (first difference at %d)",
					len(data), len(want), tt.wantRecords, firstDiff(data, want))
			}
			if tt.sticky && again == nil {
				t.Errorf("Read after %q returned no error", err)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestClientCloseDuringBlockedRead: a Read blocked on a silent server returns an error matching
// net.ErrClosed as soon as the client closes the bridge (or the tls.Conn).
func TestClientCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"bridge", "tls"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			// The server keeps its end open after the client's close_notify (which
			// tls.Conn.Close sends before closing), so that the Read can only end by the
			// local Close, not by the server hanging up in reply.
			release := make(chan struct{})
			s := bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) {
				_, _ = io.Copy(io.Discard, tc)
				<-release
			})
			t.Cleanup(func() { close(release) }) // runs before the server's Close
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			defer cancel()
			c, err := dialBridge(ctx, s.Addr, clientTLS(t), bridge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.r.Read(make([]byte, 1024))
				done <- err
			}()
			// Wait until the Read has reached the socket: the bridge has then read nothing
			// beyond the handshake, and no event but Close can end the Read.
			time.Sleep(50 * time.Millisecond)
			if which == "bridge" {
				err = c.b.Close()
			} else {
				err = c.tc.Close()
			}
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
			err = within(t, "blocked Read after Close", func() error { return <-done })
			checkErr(t, err, []error{net.ErrClosed})
			if err := c.b.Close(); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Close again: %v, want net.ErrClosed", err)
			}
		})
	}
}

// TestPassthroughTimeoutNotSticky: a Read deadline ends a wait on a silent server with a
// timeout; after a new deadline the connection works (the timeout was not sticky).
func TestPassthroughTimeoutNotSticky(t *testing.T) {
	t.Parallel()
	s := bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) {
		// Answer "pong" to each byte the client sends.
		buf := make([]byte, 1)
		for {
			if _, err := tc.Read(buf); err != nil {
				return
			}
			if _, err := tc.Write([]byte("pong")); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	c, err := dialBridge(ctx, s.Addr, clientTLS(t), bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.b.Close()
	buf := make([]byte, 16)
	_ = c.tc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err = c.r.Read(buf)
	checkErr(t, err, []error{os.ErrDeadlineExceeded}, "i/o timeout") // the socket's own error
	if !isTimeout(err) {
		t.Fatalf("error %q is not a net.Error timeout", err)
	}
	_ = c.tc.SetReadDeadline(time.Now().Add(hangBound))
	if _, err := c.tc.Write([]byte{1}); err != nil {
		t.Fatalf("Write after the timeout: %v", err)
	}
	n, err := io.ReadFull(c.r, buf[:4])
	if err != nil || string(buf[:n]) != "pong" {
		t.Fatalf("Read after the timeout: %q, %v; want pong", buf[:n], err)
	}
}
