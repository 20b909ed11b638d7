package bridge

// StartPlaintext switches to plaintext mode, where both directions carry
// raw bytes: Read serves the read-ahead buffer without record framing and
// Write goes straight to the socket.
//
// Two uses: login-only encryption, where after the first LOGIN7 packet
// went out (client) or came in (server) inside TLS everything is plaintext
// TDS (call it in passthrough mode; on the server side the bytes already
// read ahead after the TLS record that carried LOGIN7 are served as
// plaintext, which works because passthrough hands TLS one record at a
// time); and connections that end up with no TLS at all (call it in
// handshake mode before any TLS byte moved, to get the read-ahead buffer).
// Called in handshake mode after a TLS handshake, it first does what
// StartPassthrough does (send the last flight, keep the unread rest of the
// peer's last message).
//
// It must not run while a Read runs in another goroutine
// (ErrReadInProgress). Errors: ErrHandshakeIncomplete if a handshake
// started but did not finish, ErrState in plaintext mode, the sticky error
// after a failure, net.ErrClosed after Close.
func (c *Conn) StartPlaintext() error {
	return c.start(StatePlaintext, "StartPlaintext")
}

// readPlaintext serves raw bytes from the read-ahead buffer. Only when the
// buffer is empty does it read the socket, with one Read: straight into p
// when p is at least as large as the buffer, otherwise into the buffer.
// Called with rmu held.
func (c *Conn) readPlaintext(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for c.ra.buffered() == 0 {
		if c.rerr != nil {
			return 0, c.rerr
		}
		if len(p) >= c.pool.size {
			n, err := c.raw.Read(p)
			if n > 0 {
				return n, nil
			}
			if err != nil {
				return 0, c.readError(err, "bridge: plaintext: read")
			}
			continue
		}
		if err := c.ra.fill(c.raw); err != nil {
			return 0, c.readError(err, "bridge: plaintext: read")
		}
	}
	return c.ra.readRaw(p), nil
}
