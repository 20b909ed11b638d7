package bridge

// StartPlaintext switches to plaintext: raw bytes both ways, Read from the read-ahead buffer
// without record framing, Write straight to the socket. For login-only encryption call it in
// passthrough once the first LOGIN7 packet went out or came in inside TLS (what was read ahead
// after its record comes out as plaintext); for a connection without TLS, in handshake mode
// before any TLS byte moved. After a handshake it first does what [Conn.StartPassthrough] does.
//
// Errors: [ErrReadInProgress], [ErrHandshakeIncomplete] if a handshake started but did not
// finish, [ErrState] in plaintext or after CoalesceRecords, the sticky error, [net.ErrClosed].
func (c *Conn) StartPlaintext() error {
	return c.start(StatePlaintext, "StartPlaintext")
}
