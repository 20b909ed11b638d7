package mssqlbridge

import (
	"os"
	"sync"
	"time"
)

// deadline is one direction's deadline, stored cheaply and applied to the socket lazily.
//
// go-mssqldb calls SetDeadline before every Read and Write when a connection timeout is set,
// and reads each packet with two small Reads that the conn serves from its read-ahead buffer.
// Setting a deadline on a socket goes through the runtime poller (a lock and a timer update);
// doing it per driver call would cost more than serving the read. So the caller's deadline is
// only stored, and given to the socket when a call is about to reach it (enter) and the value
// changed since it was last given. A deadline set while a call is at the socket (between enter
// and exit) is applied at once, so that it can interrupt that call, as net.Conn requires.
//
// Consequence, as with bufio and crypto/tls: bytes already buffered are returned even after
// the deadline has passed; only a call that needs the socket times out.
type deadline struct {
	set func(time.Time) error // gives the deadline to the socket

	mu       sync.Mutex
	want     time.Time // as last set by the caller
	applied  time.Time // as last given to the socket
	inflight int       // calls between enter and exit
}

// store records t and, when a call is at the socket, applies it at once.
func (d *deadline) store(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.want = t
	if d.inflight == 0 {
		return nil
	}
	d.applied = t
	return d.set(t)
}

// enter is called before a call reaches the socket; it applies the stored deadline if it
// differs from the socket's. A deadline that has already passed fails the call at once with
// a timeout, before the socket (or crypto/tls, which keeps every write error) sees it. Every
// enter must be followed by exit, even on error.
func (d *deadline) enter() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight++
	if !d.want.IsZero() && !time.Now().Before(d.want) {
		return errTimeout
	}
	if d.want.Equal(d.applied) {
		return nil
	}
	d.applied = d.want
	return d.set(d.want)
}

// exit ends a call started with enter.
func (d *deadline) exit() {
	d.mu.Lock()
	d.inflight--
	d.mu.Unlock()
}

// errTimeout is returned for a call whose deadline had passed before it reached the socket.
// It is a net.Error whose Timeout reports true, and it matches os.ErrDeadlineExceeded.
var errTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "mssqlbridge: i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }
