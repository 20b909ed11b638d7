package bridge

import (
	"crypto/tls"
	"fmt"
	"io"
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
// after the bytes of the record it must serve, the records that follow
// complete in the read-ahead buffer when they are application data longer
// than the empty-record threshold of cs (see Reader), as many as fit, and
// the buffered start of such a record when the buffer ends inside it. A
// tls.Conn read directly (without a Reader) then reads the bridge once per
// batch rather than once per record: fewer calls, and fewer of the small
// allocations crypto/tls makes per read of its underlying conn. A Read
// still never waits for bytes it was not asked for, never hands over a
// record of another type after the first, and reports an error only after
// the data in front of it.
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
	c.batch = int(emptyRecordLen(cs))
	return nil
}

// readPassthrough serves the TLS layer from the read-ahead buffer. It
// never reads the socket: when no byte of the current record is buffered
// it returns errNeedSocket, and Read makes one socket read into the free
// space of the buffer and calls it again (or reads straight into p and
// hands over what it read by the same rules, see direct.go). By default a
// call hands over at most one record.
//
// Two modes, set by Reader around its reads of the tls.Conn:
//   - coalescing (c.steer's threshold n > 0, or for good after
//     CoalesceRecords, c.batch = n > 0): after the current record, the call
//     also hands over the following records that readyRecord(n) approves
//     (complete here, application data, longer than n), as many as fit in
//     p, the last one possibly in part (the tls.Conn asks for its rest
//     later, and it is complete here). crypto/tls allocates a little on
//     every read of its underlying conn, so a batch per call saves both
//     calls and allocations. c.steer.handed records how many records the call
//     began beyond the first.
//   - no-block (c.steer's no-block mode): the call never needs the socket:
//     it serves only an approved record and otherwise returns errWouldBlock.
//
// Called with rmu held, with len(p) > 0.
func (c *Conn) readPassthrough(p []byte) (int, error) {
	minLen, noBlock := c.steer.mode()
	if minLen == 0 {
		minLen = c.batch
	}
	if noBlock {
		if minLen <= 0 || !c.ra.readyRecord(minLen) {
			c.steer.handed(0)
			return 0, errWouldBlock
		}
		return c.handExtra(p, c.ra.readRecord(p), minLen), nil
	}
	if n := c.ra.readRecord(p); n > 0 {
		return c.handExtra(p, n, minLen), nil
	}
	if c.rerr != nil {
		return 0, c.rerr
	}
	return 0, errNeedSocket
}

// handExtra appends to p[:n] the approved records that follow, when
// minLen > 0, and records with c.steer.handed how many it began. After
// CoalesceRecords (no Reader at work) it also hands the buffered start of
// an application-data record longer than minLen that the buffer ends
// with, so that the tls.Conn's read for its rest finds the buffer empty
// and gets, with one socket read, the following records too: one call per
// socket read instead of two. Called with rmu held.
func (c *Conn) handExtra(p []byte, n, minLen int) int {
	k := 0
	for minLen > 0 && n < len(p) && c.ra.readyRecord(minLen) {
		n += c.ra.readRecord(p[n:])
		k++
	}
	if c.batch > 0 && minLen == c.batch && n < len(p) && c.ra.startedData(minLen) {
		n += c.ra.readRecord(p[n:])
		k++
	}
	c.steer.handed(k)
	return n
}

// readError classifies a socket read error in passthrough or plaintext
// mode: after Close errClosed; io.EOF as is (crypto/tls needs it bare to
// tell a clean end at a record boundary); a timeout as a temporary error;
// anything else becomes the sticky read error. Called with rmu held.
func (c *Conn) readError(err error, phase string) error {
	switch {
	case c.State() == StateClosed:
		return errClosed
	case err == io.EOF:
		return io.EOF
	case isTimeout(err):
		return &tempError{msg: phase, err: err}
	}
	c.rerr = fmt.Errorf("%s: %w", phase, err)
	return c.rerr
}

// writeError classifies an error of a socket Write in passthrough or
// plaintext mode (state s): after Close errClosed; a timeout as a temporary
// error; anything else becomes the sticky write error. Called with wmu
// held.
func (c *Conn) writeError(err error, s State) error {
	phase := "bridge: passthrough: write"
	if s == StatePlaintext {
		phase = "bridge: plaintext: write"
	}
	switch {
	case c.State() == StateClosed:
		return errClosed
	case isTimeout(err):
		return &tempError{msg: phase, err: err}
	}
	c.werr = fmt.Errorf("%s: %w", phase, err)
	return c.werr
}
