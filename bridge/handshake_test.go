package bridge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/tds"
)

// peerSend writes payload from the raw peer as one message of type typ in
// packets of at most size bytes.
func peerSend(t *testing.T, w io.Writer, typ tds.PacketType, payload []byte, size int) {
	t.Helper()
	if err := tds.NewWriter(w, size).WriteMessage(typ, payload); err != nil {
		t.Errorf("peer send: %v", err)
	}
}

// readN reads exactly n bytes from the bridge with Reads of at most chunk.
func readN(t *testing.T, c *Conn, n, chunk int) []byte {
	t.Helper()
	out := make([]byte, 0, n)
	buf := make([]byte, chunk)
	for len(out) < n {
		m, err := c.Read(buf[:min(chunk, n-len(out))])
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(out), err)
		}
		out = append(out, buf[:m]...)
	}
	return out
}

// A flight written in pieces goes out as one message, split into
// packets of at most 4096 bytes with EOM on the last, only when the
// bridge reads; the peer's payload is handed over across as many
// Reads as it takes, and a flight sent as several messages is read
// message after message.
func TestHandshakeFlightAndPayload(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			craw := &countConn{Conn: c}
			b := New(craw, Options{Role: RoleClient})
			defer b.Close()
			flight := pattern(10000, 5)
			for _, piece := range [][]byte{flight[:1], flight[1:4000], flight[4000:]} {
				if n, err := b.Write(piece); n != len(piece) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if w := craw.writes.Load(); w != 0 {
				t.Fatalf("%d socket writes before the first Read, want 0", w)
			}
			reply1, reply2 := pattern(5000, 6), pattern(300, 7)
			done := make(chan struct{})
			go func() {
				defer close(done)
				r := tds.NewReader(s, tds.ReaderConfig{})
				var lens []int
				var got []byte
				for {
					h, body, err := r.ReadPacket()
					if err != nil {
						t.Errorf("peer read: %v", err)
						return
					}
					if h.Type != tds.TypePrelogin {
						t.Errorf("packet type %v, want PRELOGIN", h.Type)
					}
					lens = append(lens, int(h.Length))
					got = append(got, body...)
					if h.Status&tds.StatusEOM != 0 {
						break
					}
				}
				if want := []int{4096, 4096, 10000 - 2*4088 + 8}; !slices.Equal(lens, want) {
					t.Errorf("packet lengths %v, want %v", lens, want)
				}
				if !bytes.Equal(got, flight) {
					t.Errorf("flight payload differs")
				}
				peerSend(t, s, tds.TypePrelogin, reply1, 512)
				peerSend(t, s, tds.TypePrelogin, nil, 512) // empty message: skipped
				peerSend(t, s, tds.TypeTabularResult, reply2, 4096)
			}()
			got := readN(t, b, len(reply1)+len(reply2), 777)
			<-done
			if !bytes.Equal(got, append(bytes.Clone(reply1), reply2...)) {
				t.Fatal("reply payload differs")
			}
			if w := craw.writes.Load(); w != 3 {
				t.Fatalf("%d socket writes, want 3 (one per packet)", w)
			}
		})
	}
}

// A peer's handshake packets may be longer than the 4096 bytes MS-TDS allows a sender before the
// packet size is negotiated, up to the TDS maximum: a server that wraps each write of its TLS
// library in one packet sends OpenSSL's 4096-byte buffer as a packet of 4104 bytes.
func TestHandshakeLongPeerPackets(t *testing.T) {
	for _, role := range []Role{RoleClient, RoleServer} {
		t.Run(role.String(), func(t *testing.T) {
			c, s := memPipe()
			b := New(c, Options{Role: role})
			defer b.Close()
			first, second := pattern(4096, 1), pattern(tds.MaxPacketSize-tds.HeaderSize, 2)
			go func() {
				peerSend(t, s, tds.TypePrelogin, first, tds.HeaderSize+len(first))
				peerSend(t, s, tds.TypePrelogin, second, tds.MaxPacketSize)
			}()
			got := readN(t, b, len(first)+len(second), 64<<10)
			if !bytes.Equal(got, append(bytes.Clone(first), second...)) {
				t.Fatal("payload differs")
			}
		})
	}
}

// Packet types accepted per role; anything else fails the
// bridge with an error that names the type, returned by every later call.
func TestHandshakePacketTypes(t *testing.T) {
	tests := []struct {
		name    string
		role    Role
		typ     tds.PacketType
		wantErr error
	}{
		{"client accepts PRELOGIN", RoleClient, tds.TypePrelogin, nil},
		{"client accepts tabular result", RoleClient, tds.TypeTabularResult, nil},
		{"client rejects SQL batch", RoleClient, tds.TypeSQLBatch, tds.ErrUnexpectedType},
		{"server accepts PRELOGIN", RoleServer, tds.TypePrelogin, nil},
		{"server rejects tabular result", RoleServer, tds.TypeTabularResult, tds.ErrUnexpectedType},
		{"server rejects LOGIN7", RoleServer, tds.TypeLogin7, tds.ErrUnexpectedType},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				c, s := tr.pair(t)
				b := New(c, Options{Role: tt.role})
				defer b.Close()
				sent := make(chan struct{})
				go func() {
					defer close(sent)
					// The bridge stops reading after a bad header: ignore the error.
					tds.NewWriter(s, 4096).WriteMessage(tt.typ, []byte("hello"))
				}()
				defer func() { b.Close(); <-sent }()
				buf := make([]byte, 100)
				n, err := b.Read(buf)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Read error %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == nil {
					if string(buf[:n]) != "hello" {
						t.Fatalf("Read %q", buf[:n])
					}
					return
				}
				if !strings.Contains(err.Error(), tt.typ.String()) || !strings.HasPrefix(err.Error(), "bridge: handshake: read PRELOGIN") {
					t.Fatalf("error %q does not name the phase and type %v", err, tt.typ)
				}
				if b.State() != StateFailed {
					t.Fatalf("state %v, want failed", b.State())
				}
				_, err2 := b.Read(buf)
				_, err3 := b.Write(buf)
				if err2 != err || err3 != err {
					t.Fatalf("later errors %v, %v; want the sticky %v", err2, err3, err)
				}
			})
		}
	}
}

// Data written while a response is outstanding goes out after the
// response arrived, as a message of its own.
func TestHandshakeWriteWhileWaiting(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			b := New(c, Options{Role: RoleClient})
			defer b.Close()
			b.Write([]byte("first"))
			peerGot := make(chan []byte, 4)
			sendReply := make(chan struct{})
			peerDone := make(chan struct{})
			go func() {
				defer close(peerDone)
				r := tds.NewReader(s, tds.ReaderConfig{})
				for i := 0; i < 2; i++ {
					_, p, err := r.ReadMessage()
					if err != nil {
						t.Errorf("peer read %d: %v", i, err)
						return
					}
					peerGot <- bytes.Clone(p)
					if i == 0 {
						<-sendReply
						peerSend(t, s, tds.TypePrelogin, []byte("reply"), 4096)
					}
				}
			}()
			readDone := make(chan error, 1)
			go func() {
				buf := make([]byte, 10)
				n, err := b.Read(buf)
				if err == nil && string(buf[:n]) != "reply" {
					err = errors.New("read " + string(buf[:n]))
				}
				readDone <- err
			}()
			if got := <-peerGot; string(got) != "first" {
				t.Fatalf("peer got %q", got)
			}
			// The Read now waits for the reply; this Write only buffers.
			if _, err := b.Write([]byte("second")); err != nil {
				t.Fatal(err)
			}
			close(sendReply)
			if err := <-readDone; err != nil {
				t.Fatal(err)
			}
			// The next Read sends "second" as its own message.
			go func() {
				b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				b.Read(make([]byte, 10))
			}()
			if got := <-peerGot; string(got) != "second" {
				t.Fatalf("peer got %q, want second", got)
			}
			<-peerDone
		})
	}
}

// During the handshake the bridge reads exactly the message it
// waits for; bytes after it stay in the socket.
func TestHandshakeNoReadPastMessage(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			craw := &countConn{Conn: c}
			b := New(craw, Options{Role: RoleClient})
			defer b.Close()
			var msg bytes.Buffer
			if err := tds.NewWriter(&msg, 512).WriteMessage(tds.TypePrelogin, pattern(1500, 8)); err != nil {
				t.Fatal(err)
			}
			msgLen := msg.Len()
			msg.WriteString("RAW BYTES AFTER THE MESSAGE")
			go s.Write(msg.Bytes())
			readN(t, b, 1500, 4096)
			if got := craw.read.Load(); got != int64(msgLen) {
				t.Fatalf("read %d bytes from the socket, want exactly the message's %d", got, msgLen)
			}
		})
	}
}

// In handshake mode, a timeout before the first byte of a message
// is not sticky; a timeout inside a message fails the bridge.
func TestHandshakeTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			b := New(c, Options{Role: RoleClient})
			defer b.Close()
			b.SetReadDeadline(time.Now().Add(-time.Second))
			_, err := b.Read(make([]byte, 10))
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read error %v, want a timeout", err)
			}
			if b.State() != StateHandshake {
				t.Fatalf("state %v after a clean timeout, want handshake", b.State())
			}
			b.SetReadDeadline(time.Time{})
			go peerSend(t, s, tds.TypePrelogin, []byte("ok"), 4096)
			if got := readN(t, b, 2, 10); string(got) != "ok" {
				t.Fatalf("read %q", got)
			}
			// Half a header, then the deadline: the framing is lost.
			go s.Write([]byte{0x12, 0x01, 0x00})
			b.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, err = b.Read(make([]byte, 10))
			if !errors.Is(err, os.ErrDeadlineExceeded) || b.State() != StateFailed {
				t.Fatalf("Read error %v, state %v; want a timeout that fails the bridge", err, b.State())
			}
		})
	}
}

// The switch checks its preconditions.
func TestStartPreconditions(t *testing.T) {
	t.Run("before any exchange", func(t *testing.T) {
		c, _ := net.Pipe()
		b := New(c, Options{})
		defer b.Close()
		if err := b.StartPassthrough(); !errors.Is(err, ErrHandshakeIncomplete) {
			t.Fatalf("StartPassthrough = %v, want ErrHandshakeIncomplete", err)
		}
		b.Write([]byte("client hello"))
		if err := b.StartPassthrough(); !errors.Is(err, ErrHandshakeIncomplete) {
			t.Fatalf("StartPassthrough after a flight only = %v, want ErrHandshakeIncomplete", err)
		}
		if err := b.StartPlaintext(); !errors.Is(err, ErrHandshakeIncomplete) {
			t.Fatalf("StartPlaintext after a flight only = %v, want ErrHandshakeIncomplete", err)
		}
		if b.State() != StateHandshake {
			t.Fatalf("state %v", b.State())
		}
	})
	t.Run("while a Read runs", func(t *testing.T) {
		c, s := net.Pipe()
		defer s.Close()
		b := New(c, Options{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Read(make([]byte, 1))
		}()
		// Wait until the Read holds the read lock (it blocks on the pipe).
		for b.rmu.TryLock() {
			b.rmu.Unlock()
			time.Sleep(time.Millisecond)
		}
		if err := b.StartPassthrough(); !errors.Is(err, ErrReadInProgress) {
			t.Errorf("StartPassthrough = %v, want ErrReadInProgress", err)
		}
		b.Close()
		<-done
	})
	t.Run("twice and after close", func(t *testing.T) {
		small, _ := pkis(t)
		p := newTLSPair(t, pairConfig{tr: transports[0], pki: small})
		if err := p.cb.StartPassthrough(); !errors.Is(err, ErrState) {
			t.Fatalf("second StartPassthrough = %v, want ErrState", err)
		}
		if err := p.cb.StartPlaintext(); err != nil {
			t.Fatalf("StartPlaintext from passthrough = %v", err)
		}
		if err := p.cb.StartPlaintext(); !errors.Is(err, ErrState) {
			t.Fatalf("second StartPlaintext = %v, want ErrState", err)
		}
		if err := p.cb.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.cb.StartPassthrough(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("StartPassthrough after Close = %v, want net.ErrClosed", err)
		}
		if err := p.cb.Close(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("second Close = %v, want net.ErrClosed", err)
		}
		if _, err := p.cb.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read after Close = %v", err)
		}
		if _, err := p.cb.Write(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Write after Close = %v", err)
		}
	})
	t.Run("socket closed before the switch", func(t *testing.T) {
		c, s := net.Pipe()
		b := New(c, Options{Role: RoleServer})
		defer b.Close()
		go peerSend(t, s, tds.TypePrelogin, []byte("hello"), 4096)
		readN(t, b, 5, 10)
		b.Write([]byte("final flight"))
		s.Close()
		err := b.StartPassthrough()
		if err == nil || b.State() != StateFailed {
			t.Fatalf("StartPassthrough = %v, state %v; want a send error and failed", err, b.State())
		}
		if !strings.HasPrefix(err.Error(), "bridge: handshake: send PRELOGIN flight") {
			t.Fatalf("error %q does not name the phase", err)
		}
	})
}

// The unread rest of the last handshake message is served in passthrough
// before anything from the socket.
func TestStartKeepsUnreadPayload(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			b := New(c, Options{Role: RoleClient})
			defer b.Close()
			b.Write([]byte("hello"))
			go func() {
				tds.NewReader(s, tds.ReaderConfig{}).ReadMessage()
				peerSend(t, s, tds.TypePrelogin, []byte("handshake|rest"), 4096)
				s.Write([]byte("|socket"))
			}()
			if got := readN(t, b, 10, 10); string(got) != "handshake|" {
				t.Fatalf("read %q", got)
			}
			if err := b.StartPlaintext(); err != nil {
				t.Fatal(err)
			}
			if got := readN(t, b, 11, 100); string(got) != "rest|socket" {
				t.Fatalf("read %q, want rest|socket", got)
			}
		})
	}
}

// With real TLS, a server that answers the ClientHello with
// a packet of the wrong type, or changes type inside a message, fails the
// handshake with an error that says so.
func TestHandshakeWrongTypeMidHandshake(t *testing.T) {
	small, _ := pkis(t)
	tests := []struct {
		name    string
		reply   func(w io.Writer) error
		wantErr error
	}{
		{"SQL batch reply", func(w io.Writer) error {
			return tds.NewWriter(w, 4096).WriteMessage(tds.TypeSQLBatch, []byte{0x16, 3, 3, 0, 0})
		}, tds.ErrUnexpectedType},
		{"type changes inside the message", func(w io.Writer) error {
			pkt := tds.Header{Type: tds.TypePrelogin, Length: 10, PacketID: 1}.Append(nil)
			pkt = append(pkt, 0x16, 3)
			pkt = append(pkt, tds.Header{Type: tds.TypeTabularResult, Status: tds.StatusEOM, Length: 10, PacketID: 2}.Append(nil)...)
			pkt = append(pkt, 3, 0)
			_, err := w.Write(pkt)
			return err
		}, tds.ErrTypeChanged},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				c, s := tr.pair(t)
				cb := New(c, Options{Role: RoleClient})
				defer cb.Close()
				done := make(chan struct{})
				go func() {
					defer close(done)
					if _, _, err := tds.NewReader(s, tds.ReaderConfig{}).ReadMessage(); err != nil {
						return
					}
					tt.reply(s)
				}()
				ccfg, _ := pairConfig{pki: small}.configs()
				err := tls.Client(cb, ccfg).Handshake()
				state := cb.State()
				cb.Close()
				<-done
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), "bridge: handshake: read PRELOGIN reply") {
					t.Fatalf("handshake error %v, want %v with the phase", err, tt.wantErr)
				}
				if state != StateFailed {
					t.Fatalf("state %v, want failed", state)
				}
			})
		}
	}
}
