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

// errWouldBlock is what Read returns in no-block mode (see Reader) when
// serving the next record would need the socket. It is a net.Error whose
// Temporary reports true, so crypto/tls returns it from (*tls.Conn).Read
// without making it sticky. It never leaves the package through Reader.
var errWouldBlock error = wouldBlockError{}

// errNeedSocket is how readPassthrough tells Read that nothing of the
// current record is buffered, so Read must read the socket. It never
// leaves Read.
var errNeedSocket = errors.New("bridge: read-ahead buffer empty")

type wouldBlockError struct{}

func (wouldBlockError) Error() string   { return "bridge: no complete record buffered (would block)" }
func (wouldBlockError) Timeout() bool   { return true }
func (wouldBlockError) Temporary() bool { return true }

// tempError wraps a timeout from the socket with the bridge's context. It
// stays a net.Error (Timeout and Temporary report true) so that callers
// that type-assert net.Error, as crypto/tls does, still see a temporary,
// non-sticky error; errors.Is matches the underlying error (for example
// os.ErrDeadlineExceeded).
type tempError struct {
	msg string
	err error
}

func (e *tempError) Error() string   { return e.msg + ": " + e.err.Error() }
func (e *tempError) Unwrap() error   { return e.err }
func (e *tempError) Timeout() bool   { return true }
func (e *tempError) Temporary() bool { return true }

// isTimeout reports whether err is a net.Error that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
