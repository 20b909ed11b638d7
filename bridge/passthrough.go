package bridge

import (
	"crypto/tls"
	"fmt"
)

// StartPassthrough ends the handshake: it sends the flight the TLS layer wrote after its last
// Read (a TLS 1.3 client Finished, a resumed TLS 1.2 session's Finished, a TLS 1.2 server's final
// flight) as one PRELOGIN message and switches to passthrough, where the unread rest of the
// peer's last handshake message (TLS 1.3 session tickets) is served first.
//
// Call it after the tls.Conn's Handshake returned nil, before the first application Write.
// Errors: [ErrReadInProgress], [ErrHandshakeIncomplete] before a message went each way,
// [ErrState] outside handshake mode, the sticky error (a failure to send the flight included),
// [net.ErrClosed].
func (c *Conn) StartPassthrough() error {
	return c.start(StatePassthrough, "StartPassthrough")
}

// CoalesceRecords makes every later passthrough Read hand the TLS layer, after the record it must
// serve, the buffered records that follow while they are application data longer than the
// empty-record threshold of cs, the last one possibly in part. A tls.Conn read on its own then
// reads the bridge once per socket read rather than once per record, with fewer of the
// allocations crypto/tls makes per read. A Read still never waits for bytes it was not asked
// for, never hands over a record of another type after the first, and reports an error only
// after the data in front of it.
//
// Call it in passthrough once the handshake is complete (cs from
// [tls.Conn.ConnectionState]), for a Conn that stays in passthrough: records past the one read
// may then sit in the tls.Conn, so a later StartPlaintext fails with [ErrState]. Errors:
// [ErrHandshakeIncomplete], [ErrState] outside passthrough, [ErrReadInProgress].
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
