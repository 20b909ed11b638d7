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

// TestPeekSocket: what one look at the socket finds, and that it takes no byte from it.
func TestPeekSocket(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(*net.TCPConn)
		plain  bool
		want   error // nil, io.EOF, syscall.ECONNRESET or errUnsolicited
	}{
		{"idle", func(*net.TCPConn) {}, true, nil},
		{"FIN", func(s *net.TCPConn) { _ = s.Close() }, true, io.EOF},
		{"RST", func(s *net.TCPConn) { _ = s.SetLinger(0); _ = s.Close() }, true, syscall.ECONNRESET},
		{"bytes, plaintext", func(s *net.TCPConn) { _, _ = s.Write([]byte{0x04, 0x01}) }, true, errUnsolicited},
		{"bytes, TLS", func(s *net.TCPConn) { _, _ = s.Write([]byte{0x17, 0x03}) }, false, nil},
		{"FIN, TLS", func(s *net.TCPConn) { _ = s.Close() }, false, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := tcpPair(t)
			tc.server(s)
			var got error
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if got = peekSocket(rawConnOf(c), tc.plain); got != nil || tc.want == nil {
					break // the loopback delivers at once; the loop only absorbs scheduling
				}
			}
			if tc.want == nil && got != nil || tc.want != nil && !errors.Is(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.name == "bytes, TLS" {
				b := make([]byte, 2)
				if _, err := io.ReadFull(c, b); err != nil || b[0] != 0x17 {
					t.Fatalf("the bytes after the look: % x, %v", b, err)
				}
			}
		})
	}
}
