package bridge

import (
	"crypto/tls"
	"fmt"
)

// StartPassthrough ends the handshake: it sends the flight the TLS layer
// wrote after its last Read (the TLS 1.3 client Finished, the Finished of
// a resumed TLS 1.2 session, a TLS 1.2 server's final flight) as one
// PRELOGIN message, then switches to passthrough, where TLS records go
// straight to and from the socket. Bytes of the peer's last handshake
// message that the TLS layer has not read yet (e.g. TLS 1.3 session
// tickets) are served first.
//
// Call it right after the tls.Conn's Handshake returned nil, before the
// first application Write (until the switch, a Write is still buffered as
// part of a PRELOGIN flight), and not while a Read runs in another
// goroutine (ErrReadInProgress). It returns an error
// wrapping ErrHandshakeIncomplete if no message has gone both ways yet,
// ErrState when not in handshake mode (e.g. a second call), the sticky
// error after a failure, and an error matching net.ErrClosed after Close.
// If sending the flight fails, the Conn fails with that error.
func (c *Conn) StartPassthrough() error {
	return c.start(StatePassthrough, "StartPassthrough")
}

// CoalesceRecords makes every later passthrough Read hand the TLS layer,
// after the record it must serve, the records that follow in the
// read-ahead buffer while they are application data longer than the
// empty-record threshold of cs, the last one possibly in part (the rule is
// readAhead.hand). A tls.Conn read on its own then reads the bridge once per
// socket read rather than once per record: fewer calls, and fewer of the
// small allocations crypto/tls makes per read of its underlying conn. A
// Read still never waits for bytes it was not asked for, never hands over
// a record of another type after the first, and reports an error only
// after the data in front of it.
//
// Call it once the handshake is complete (cs from the tls.Conn's
// ConnectionState), in passthrough mode, for a Conn that stays in
// passthrough until it is closed: records beyond the one being read may
// then sit in the tls.Conn, so StartPlaintext afterwards fails with
// ErrState. Errors: ErrHandshakeIncomplete when cs is not of a completed
// handshake, ErrState outside passthrough mode. Not to be called while a
// Read runs in another goroutine (ErrReadInProgress).
func (c *Conn) CoalesceRecords(cs tls.ConnectionState) error {
	if !cs.HandshakeComplete {
		return fmt.Errorf("bridge: CoalesceRecords: %w", ErrHandshakeIncomplete)
	}
	if !c.rmu.TryLock() {
		return fmt.Errorf("bridge: CoalesceRecords: %w", ErrReadInProgress)
	}
	defer c.rmu.Unlock()
	if s := c.State(); s != StatePassthrough {
		return fmt.Errorf("bridge: CoalesceRecords in state %v: %w", s, ErrState)
	}
	c.ra.coalesce = int(emptyRecordLen(cs))
	return nil
}
