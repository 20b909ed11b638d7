package mssqlbridge

import (
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// deadline is one direction's deadline, stored cheaply and applied to the socket lazily.
//
// go-mssqldb calls SetDeadline before every Read and Write when a connection timeout is set,
// and reads each packet with two small Reads that are mostly served from buffers (the
// bridge's read-ahead, crypto/tls's decrypted record).
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

	want     atomic.Int64 // the caller's deadline (see encodeDeadline)
	inflight atomic.Int32 // calls between enter and exit
	applied  atomic.Int64 // the socket's deadline; written only with mu held
	mu       sync.Mutex   // serializes giving deadlines to the socket
}

// store records t and, when a call is at the socket, applies it at once. Without a call at the
// socket it costs two atomic operations.
//
// Why no deadline is lost: store writes want then reads inflight, enter increments inflight
// then reads want; the atomics are sequentially consistent, so at least one of the two sees the
// other's write and applies the value, and apply always gives the socket the latest want.
func (d *deadline) store(t time.Time) error {
	d.want.Store(encodeDeadline(t))
	if d.inflight.Load() == 0 {
		return nil
	}
	return d.apply()
}

// enter is called before a call reaches the socket; it applies the stored deadline if it
// differs from the socket's. A deadline that has already passed fails the call at once with
// a timeout, before the socket (or crypto/tls, which keeps every write error) sees it. Every
// enter must be followed by exit, even on error.
func (d *deadline) enter() error {
	d.inflight.Add(1)
	w := d.want.Load()
	if w != 0 && w <= time.Now().UnixNano() {
		return errTimeout
	}
	if w == d.applied.Load() {
		return nil
	}
	return d.apply()
}

// exit ends a call started with enter.
func (d *deadline) exit() { d.inflight.Add(-1) }

// apply gives the socket the latest stored deadline if it does not have it yet.
func (d *deadline) apply() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.want.Load()
	if w == d.applied.Load() {
		return nil
	}
	d.applied.Store(w)
	return d.set(decodeDeadline(w))
}

// Deadlines are stored as Unix nanoseconds, 0 meaning none. Times before 1970 (such as the
// "long ago" deadlines used to interrupt calls) become 1 ns after the epoch, times after 2262
// become the largest value: both keep their meaning.
var (
	minDeadline = time.Unix(0, 1)
	maxDeadline = time.Unix(0, math.MaxInt64)
)

func encodeDeadline(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Before(minDeadline):
		return 1
	case t.After(maxDeadline):
		return math.MaxInt64
	}
	return t.UnixNano()
}

func decodeDeadline(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// errTimeout is returned for a call whose deadline had passed before it reached the socket:
// the error the socket itself returns then (a net.Error whose Timeout reports true).
var errTimeout = os.ErrDeadlineExceeded
