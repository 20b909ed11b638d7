package bridge

import (
	"errors"
	"fmt"
	"net"
)

var (
	// ErrState: a method was called in a state that does not allow it, e.g. StartPassthrough
	// twice, or after StartPlaintext.
	ErrState = errors.New("bridge: not allowed in this state")
	// ErrHandshakeIncomplete: StartPassthrough, StartPlaintext or CoalesceRecords was called
	// before the TLS handshake finished (no message yet one way, or a Read waiting for one).
	ErrHandshakeIncomplete = errors.New("bridge: TLS handshake not complete")
	// ErrReadInProgress: StartPassthrough, StartPlaintext or CoalesceRecords was called while a
	// Read ran in another goroutine.
	ErrReadInProgress = errors.New("bridge: a Read is in progress")
)

// errClosed is returned by every call after Close; it matches net.ErrClosed.
var errClosed = fmt.Errorf("bridge: %w", net.ErrClosed)

// errWouldBlock is Read's answer in a Reader's no-block mode when the next record would need the
// socket. crypto/tls passes it up without keeping it (see tempError); Reader never returns it.
var errWouldBlock error = &tempError{msg: "bridge: no complete record buffered (would block)"}

// tempError is the bridge's one timeout error: a socket timeout (err) with the bridge's context,
// or errWouldBlock. Timeout and Temporary report true so that crypto/tls, which type-asserts
// net.Error, does not make it sticky; errors.Is matches err (os.ErrDeadlineExceeded).
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
