package tdstest

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// socket is the accepted TCP connection as the server's layers see it: Read first serves the
// byte(s) peeked to tell PRELOGIN from a TLS ClientHello, and Write goes through a faultWriter so
// that the handshake phase can send a mutated packet. Everything else is the embedded net.Conn.
type socket struct {
	net.Conn
	fw *faultWriter // writes to the embedded Conn

	mu     sync.Mutex
	prefix []byte
}

func newSocket(raw net.Conn, prefix []byte) *socket {
	return &socket{Conn: raw, fw: &faultWriter{w: raw}, prefix: prefix}
}

// Read serves the peeked prefix, then the socket.
func (s *socket) Read(p []byte) (int, error) {
	s.mu.Lock()
	if len(s.prefix) > 0 {
		n := copy(p, s.prefix)
		s.prefix = s.prefix[n:]
		s.mu.Unlock()
		return n, nil
	}
	s.mu.Unlock()
	return s.Conn.Read(p)
}

// Write writes through the fault writer (one Write on the socket per call, or none when a fault
// fires).
func (s *socket) Write(p []byte) (int, error) { return s.fw.Write(p) }

// switchReader is an io.Reader whose source changes when the connection changes mode (plaintext
// socket, TLS, bridge in plaintext). tds.Reader never reads past the message it returns, so
// switching between messages (or between packets, for login-only encryption) loses nothing.
type switchReader struct{ r io.Reader }

func (s *switchReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// recordWriter cuts the byte stream into writes of exactly size bytes, so that a tls.Conn with
// DynamicRecordSizingDisabled makes records of exactly size bytes of plaintext whatever the TDS
// packet boundaries. Flush writes what is left (the end of a message) as one shorter record.
type recordWriter struct {
	w    io.Writer
	size int
	buf  []byte
}

func newRecordWriter(w io.Writer, size int) *recordWriter {
	return &recordWriter{w: w, size: size, buf: make([]byte, 0, size)}
}

// Write buffers p and writes every full record. It returns len(p) unless a record write fails.
func (r *recordWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(r.size-len(r.buf), len(p))
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
		if len(r.buf) == r.size {
			if _, err := r.w.Write(r.buf); err != nil {
				return n - len(p), fmt.Errorf("tdstest: write record: %w", err)
			}
			r.buf = r.buf[:0]
		}
	}
	return n, nil
}

// Flush writes the buffered remainder, if any, as one record.
func (r *recordWriter) Flush() error {
	if len(r.buf) == 0 {
		return nil
	}
	_, err := r.w.Write(r.buf)
	r.buf = r.buf[:0]
	if err != nil {
		return fmt.Errorf("tdstest: write record: %w", err)
	}
	return nil
}
