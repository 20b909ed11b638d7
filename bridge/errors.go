package bridge

import (
	"errors"
	"fmt"
	"net"
)

var (
	// ErrState: a method was called in a state that does not allow it,
	// e.g. StartPassthrough twice, or StartPassthrough after StartPlaintext.
	ErrState = errors.New("bridge: not allowed in this state")
	// ErrHandshakeIncomplete: StartPassthrough or StartPlaintext was called
	// while a TLS handshake over the bridge had not finished (no message
	// exchanged in one of the two directions, or a Read still waiting for
	// the peer's next message).
	ErrHandshakeIncomplete = errors.New("bridge: TLS handshake not complete")
	// ErrReadInProgress: StartPassthrough or StartPlaintext was called
	// while a Read was running in another goroutine.
	ErrReadInProgress = errors.New("bridge: a Read is in progress")
)

// errClosed is returned by every call after Close; it matches net.ErrClosed.
var errClosed = fmt.Errorf("bridge: %w", net.ErrClosed)

// errWouldBlock is what Read returns in a Reader's no-block mode when
// serving the next record would need the socket. crypto/tls returns it
// from (*tls.Conn).Read without keeping it, being a temporary net.Error;
// it never leaves the package through Reader.
var errWouldBlock error = &tempError{msg: "bridge: no complete record buffered (would block)"}

// tempError is the bridge's one timeout error: a timeout from the socket
// (err) with the bridge's context, or errWouldBlock. It is a net.Error
// whose Timeout and Temporary report true, so that crypto/tls, which
// type-asserts net.Error, does not make it sticky; errors.Is matches err
// (for example os.ErrDeadlineExceeded).
type tempError struct {
	msg string
	err error
}

func (e *tempError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}
func (e *tempError) Unwrap() error   { return e.err }
func (e *tempError) Timeout() bool   { return true }
func (e *tempError) Temporary() bool { return true }

// isTimeout reports whether err is a net.Error that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
