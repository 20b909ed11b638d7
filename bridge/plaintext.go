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
