package bridge

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/fsm"
	"github.com/tdsbridge/tdsbridge/tds"
)

// Conn is the [net.Conn] between crypto/tls and the TCP socket; the package documentation has its
// modes, its states and which errors are sticky.
//
// Read and Write may run concurrently; concurrent Reads (or Writes) are serialised. Close, State,
// the deadline and address methods may be called at any time, and Close unblocks a blocked Read
// and Write.
type Conn struct {
	raw  net.Conn
	role Role
	pool *bufPool // read-ahead buffers of the configured size

	sm fsm.Machine[State] // the state, changed only by transition; the sticky error of StateFailed

	// Read side, protected by rmu.
	rmu  sync.Mutex
	ra   readAhead // passthrough and plaintext
	rerr error     // first permanent read error in passthrough or plaintext mode
	// Handshake mode: hsPayload, the unread rest of the current message, aliases hsIn's buffer
	// until the next ReadMessage; hsRead counts socket bytes, to tell a timeout before a
	// message from one inside it.
	hsIn       *tds.Reader
	hsPayload  []byte
	hsMessages int
	hsRead     int64

	// Write side, protected by wmu. Lock order: rmu before wmu.
	wmu  sync.Mutex
	werr error // first permanent write error in passthrough or plaintext mode
	// Handshake mode: flight collects what the TLS layer writes until it next reads; hsOut
	// frames it into PRELOGIN packets.
	flight    []byte
	hsOut     *tds.Writer
	hsFlights int
	hsWritten int64
}

// New returns a bridge over raw, in [StateHandshake] unless opts.Direct is set ([Client] and
// [Server] also make the tls.Conn). The Conn owns raw from now on: use raw only through it.
func New(raw net.Conn, opts Options) *Conn {
	c := &Conn{raw: raw, role: opts.Role, pool: poolFor(max(opts.ReadAheadSize, DefaultReadAheadSize))}
	if opts.Direct {
		c.ra.init(c.pool, nil)
		c.sm.Init(transitions, StateFailed, StatePassthrough)
		return c
	}
	c.sm.Init(transitions, StateFailed, StateHandshake)
	allowed := tds.Types(tds.TypePrelogin)
	if opts.Role == RoleClient {
		allowed = tds.Types(tds.TypePrelogin, tds.TypeTabularResult)
	}
	c.hsIn = tds.NewReader(hsSocketReader{c}, tds.ReaderConfig{
		// Not the 4096 bytes MS-TDS allows a sender before the packet size is negotiated: a
		// peer whose TLS library writes more at once sends longer packets (docs/protocol.md,
		// "Handshake packets longer than 4096 bytes").
		MaxPacketSize: tds.MaxPacketSize,
		Allowed:       allowed,
	})
	c.hsOut = tds.NewWriter(hsSocketWriter{c}, tds.DefaultPacketSize)
	return c
}

// State returns the current state, which may change as soon as it returns.
func (c *Conn) State() State { return c.sm.State() }

// Read reads into p what the mode gives (see the package documentation) and blocks until data
// arrives, the deadline passes or Close is called. The end of the stream is [io.EOF] in
// passthrough and plaintext, an error wrapping [io.ErrUnexpectedEOF] during the handshake.
func (c *Conn) Read(p []byte) (n int, err error) {
	c.rmu.Lock()
	if s := c.State(); s != StatePassthrough && s != StatePlaintext {
		n, err = c.readOther(p)
	} else {
		for len(p) > 0 {
			if n = c.ra.hand(p); n > 0 {
				break
			}
			if n, err = c.fill(p); n > 0 || err != nil {
				break
			}
		}
	}
	c.rmu.Unlock()
	return n, err
}

// readOther is Read in handshake mode and after a failure or Close.
func (c *Conn) readOther(p []byte) (int, error) {
	s := c.State()
	if s == StateHandshake {
		return c.readHandshake(p)
	}
	if s == StateClosed {
		c.ra.drop()
	}
	return 0, c.stickyErr(s)
}

// fill reads the socket once for a Read that can hand out nothing: into the read-ahead buffer,
// or in plaintext straight into p when p is as large as that buffer (one copy less); it returns
// the bytes read into p. It is the one frame between Read and the socket (docs/design.md, "Stack
// depth"). Called with rmu held, in passthrough or plaintext mode.
func (c *Conn) fill(p []byte) (int, error) {
	var err error
	switch {
	case c.rerr != nil:
		return 0, c.rerr
	case c.ra.noBlock:
		return 0, errWouldBlock
	case c.ra.plain && len(p) >= c.pool.size:
		var n int
		if n, err = c.raw.Read(p); n > 0 {
			return n, nil
		}
	default:
		n, rerr := c.raw.Read(c.ra.space())
		err = c.ra.commit(n, rerr)
	}
	if err != nil {
		return 0, c.readError(err)
	}
	return 0, nil
}

// readError classifies a socket read error in passthrough or plaintext: errClosed after Close,
// else the socket's own error unwrapped, as a driver's own transport would see it (crypto/tls
// also needs a bare io.EOF at a record boundary). Anything but a timeout or io.EOF becomes rerr.
// Called with rmu held.
func (c *Conn) readError(err error) error {
	switch {
	case c.State() == StateClosed:
		return errClosed
	case err == io.EOF, isTimeout(err):
		return err
	}
	c.rerr = err
	return err
}

// writeError is readError for a socket Write, with werr. Called with wmu held.
func (c *Conn) writeError(err error) error {
	switch {
	case c.State() == StateClosed:
		return errClosed
	case isTimeout(err):
		return err
	}
	c.werr = err
	return err
}

// Write in handshake mode appends p to the flight and returns len(p), sending the flight only if p
// holds an alert; in passthrough and plaintext it makes exactly one socket Write of p itself,
// without copying, and blocks while the socket does not accept the bytes.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch s := c.State(); s {
	case StatePassthrough, StatePlaintext:
		// One Write of p on the socket, in Write's own frame.
		if c.werr != nil {
			return 0, c.werr
		}
		n, err := c.raw.Write(p)
		if err != nil {
			err = c.writeError(err)
		}
		return n, err
	case StateHandshake:
		c.flight = append(c.flight, p...)
		if hasAlert(p) {
			// A TLS layer that sends an alert does not read again: send it now, or the
			// peer would see the connection close without being told why.
			if err := c.flushLocked(); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	default:
		return 0, c.stickyErr(s)
	}
}

// Close closes the socket, unblocking a Read and a Write in other goroutines; they and every later
// call, a second Close included, return an error matching [net.ErrClosed]. Close sends nothing:
// buffered bytes both ways are dropped, and the read-ahead buffer goes back to the pool.
func (c *Conn) Close() error {
	if err := c.transition(StateClosed, nil); err != nil {
		return errClosed
	}
	err := c.raw.Close()
	if c.rmu.TryLock() {
		c.ra.drop()
		c.rmu.Unlock()
	}
	return err
}

// LocalAddr returns the socket's local address.
func (c *Conn) LocalAddr() net.Addr { return c.raw.LocalAddr() }

// RemoteAddr returns the socket's remote address.
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// SetDeadline sets the socket's deadlines, which apply in every mode. A timeout is a [net.Error]
// whose Timeout reports true; whether the Conn survives it is in the package documentation.
func (c *Conn) SetDeadline(t time.Time) error { return c.raw.SetDeadline(t) }

// SetReadDeadline sets the socket's read deadline; see SetDeadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.raw.SetReadDeadline(t) }

// SetWriteDeadline sets the socket's write deadline; see SetDeadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }
