package mssqlbridge

import (
	"net"
	"sync/atomic"
)

// socket is the TCP connection as the bridge sees it. Every Read enters the read deadline
// first, so that a stored deadline reaches the socket exactly when a read needs the socket,
// and not when the bridge or crypto/tls serve a Read from their buffers (see deadline). Every
// Write goes through the conn's batch, which holds the bytes of an unfinished TDS message
// back to write them together (see batch). Everything else goes to the socket as it is.
type socket struct {
	net.Conn
	rdl      *deadline
	out      *batch
	lastRead *atomic.Int64 // set to monotime by every Read that returns bytes (see conn.checkAlive)
}

// Read reads from the socket under the stored read deadline; a deadline that has passed fails
// the Read with a timeout before the socket is touched.
func (s *socket) Read(p []byte) (int, error) {
	err := s.rdl.enter()
	if err == nil {
		var n int
		n, err = s.Conn.Read(p)
		s.rdl.exit()
		if n > 0 {
			s.lastRead.Store(monotime())
		}
		return n, err
	}
	s.rdl.exit()
	return 0, err
}

// Write writes p to the socket, or holds it until the message it belongs to is complete. A
// packet that neither joins held bytes nor is held itself (every packet of a one-packet
// message) goes to the socket in Write's own frame.
func (s *socket) Write(p []byte) (int, error) {
	if s.out.passes() {
		return s.Conn.Write(p)
	}
	return s.out.write(s.Conn, p)
}
