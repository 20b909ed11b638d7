package bridge

// StartPlaintext switches to plaintext mode, where both directions carry
// raw bytes: Read serves the read-ahead buffer without record framing and
// Write goes straight to the socket.
//
// Two uses: login-only encryption, after the first LOGIN7 packet went out
// (client) or came in (server) inside TLS (call it in passthrough mode:
// what was read ahead after the record that carried LOGIN7 is served as
// plaintext, since passthrough hands TLS one record at a time); and
// connections without TLS (call it in handshake mode before any TLS byte
// moved). After a handshake in handshake mode it first does what
// StartPassthrough does.
//
// It must not run while a Read runs in another goroutine
// (ErrReadInProgress). Errors: ErrHandshakeIncomplete if a handshake
// started but did not finish, ErrState in plaintext mode, the sticky error
// after a failure, net.ErrClosed after Close.
func (c *Conn) StartPlaintext() error {
	return c.start(StatePlaintext, "StartPlaintext")
}
