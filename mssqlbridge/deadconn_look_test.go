//go:build unix

package mssqlbridge

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestLookAtSocket: what one look at the socket finds, whatever its deadline and a Read in
// progress, and that it takes no byte from it. Only a close or a reset is found; bytes waiting
// are not, and a close behind them is found where the platform reports a half-close.
func TestLookAtSocket(t *testing.T) {
	halfClose := error(nil)
	if lookSeesHalfClose {
		halfClose = io.EOF
	}
	past := func(c *net.TCPConn) { _ = c.SetReadDeadline(time.Now().Add(-time.Second)) }
	for _, tc := range []struct {
		name   string
		client func(*net.TCPConn) // before the look
		server func(*net.TCPConn)
		want   error // nil, io.EOF or syscall.ECONNRESET
		unread int   // bytes the client must still be able to read after the look
	}{
		{name: "idle", server: func(*net.TCPConn) {}},
		{name: "FIN", server: func(s *net.TCPConn) { _ = s.Close() }, want: io.EOF},
		{name: "RST", server: func(s *net.TCPConn) { _ = s.SetLinger(0); _ = s.Close() }, want: syscall.ECONNRESET},
		{name: "bytes", server: func(s *net.TCPConn) { _, _ = s.Write([]byte{0x04, 0x01}) }, unread: 2},
		{name: "bytes then FIN", server: func(s *net.TCPConn) { _, _ = s.Write([]byte{0x15, 0x03, 0x03}); _ = s.Close() },
			want: halfClose, unread: 3},
		{name: "FIN, read deadline passed", client: past, server: func(s *net.TCPConn) { _ = s.Close() }, want: io.EOF},
		{name: "idle, read deadline passed", client: past, server: func(*net.TCPConn) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := tcpPair(t)
			if tc.client != nil {
				tc.client(c)
			}
			tc.server(s)
			var got error
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if got = lookAtSocket(rawConnOf(c)); got != nil || tc.want == nil {
					break // the loopback delivers at once; the loop only absorbs scheduling
				}
			}
			if tc.want == nil && got != nil || tc.want != nil && !errors.Is(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.unread > 0 {
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, tc.unread)
				if _, err := io.ReadFull(c, b); err != nil {
					t.Fatalf("the bytes after the look: % x, %v", b, err)
				}
			}
		})
	}
}

// TestLookDuringRead: a look while another goroutine's Read waits on the socket returns at
// once, and takes nothing from that Read.
func TestLookDuringRead(t *testing.T) {
	c, s := tcpPair(t)
	read := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		_, err := c.Read(b)
		if err == nil && b[0] != 0x42 {
			err = errors.New("read the wrong byte")
		}
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the Read reach the poller
	looked := make(chan error, 1)
	go func() { looked <- lookAtSocket(rawConnOf(c)) }()
	select {
	case err := <-looked:
		if err != nil {
			t.Fatalf("look at a healthy socket: %v", err)
		}
	case <-time.After(5 * time.Second):
		_ = c.Close()
		t.Fatal("the look waited for the Read")
	}
	_, _ = s.Write([]byte{0x42})
	if err := <-read; err != nil {
		t.Fatal(err)
	}
}
