package bridge

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/fsm"
	"github.com/tdsbridge/tdsbridge/tds"
)

// Conn is the net.Conn that sits between crypto/tls (tls.Client or
// tls.Server) and the TCP socket. See the package documentation for the
// modes and the state diagram.
//
// Concurrency: Read and Write may run at the same time in different
// goroutines; several concurrent Reads (or Writes) are serialised. Close,
// State, the deadline methods and the address methods may be called at any
// time, and Close unblocks a Read and a Write blocked in other goroutines.
// StartPassthrough and StartPlaintext must not run concurrently with Read.
// Which errors are sticky is in the package documentation ("States").
type Conn struct {
	raw  net.Conn
	role Role
	pool *bufPool // read-ahead buffers of the configured size

	sm fsm.Machine[State] // the state, changed only by transition; the sticky error of StateFailed

	// Read side, protected by rmu.
	rmu  sync.Mutex
	ra   readAhead // passthrough and plaintext
	rerr error     // first permanent read error in passthrough or plaintext mode
	// Handshake mode: hsIn reads the peer's messages straight from the
	// socket; hsPayload is the unread rest of the current message (it
	// aliases hsIn's buffer and is valid until the next ReadMessage);
	// hsMessages counts the messages received; hsRead counts bytes read
	// from the socket (to tell a timeout before a message from one
	// inside it).
	hsIn       *tds.Reader
	hsPayload  []byte
	hsMessages int
	hsRead     int64

	// Write side, protected by wmu. Lock order: rmu before wmu.
	wmu  sync.Mutex
	werr error // first permanent write error in passthrough or plaintext mode
	// Handshake mode: flight collects what the TLS layer writes until it
	// next reads; hsOut frames it into PRELOGIN packets; hsFlights counts
	// the flights sent; hsWritten counts bytes written to the socket.
	flight    []byte
	hsOut     *tds.Writer
	hsFlights int
	hsWritten int64
}

// New returns a bridge over raw. Unless opts.Direct is set it starts in
// StateHandshake; hand it to tls.Client or tls.Server, run the handshake,
// then call StartPassthrough (or StartPlaintext for login-only encryption).
// The Conn owns raw from now on: use raw only through the Conn.
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
		MaxPacketSize: tds.DefaultPacketSize,
		Allowed:       allowed,
	})
	c.hsOut = tds.NewWriter(hsSocketWriter{c}, tds.DefaultPacketSize)
	return c
}

// State returns the current state. It may change as soon as it returns
// (Close from another goroutine, a failure).
func (c *Conn) State() State { return c.sm.State() }

// Read reads into p; what it reads depends on the state:
//   - handshake: the payload of the peer's next PRELOGIN message, after
//     sending the flight buffered by earlier Writes;
//   - passthrough: at most one TLS record's bytes (see CoalesceRecords for
//     more), from the read-ahead buffer, reading the socket only when
//     nothing is buffered;
//   - plaintext: raw bytes from the read-ahead buffer, reading the socket
//     only when the buffer is empty.
//
// Read blocks until data arrives, the deadline passes or Close is called.
// A timeout is not sticky. In passthrough and plaintext mode the end of
// the stream is io.EOF, unwrapped; during the handshake it is an error
// wrapping io.ErrUnexpectedEOF.
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

// fill reads the socket once for a Read that can hand out nothing: into
// the read-ahead buffer, or, in plaintext, straight into p when p is as
// large as that buffer (one copy less), returning the bytes read into p.
// The socket is read here, one frame below Read: see "Stack depth" in
// doc.go. Called with rmu held, in passthrough or plaintext mode.
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

// readError classifies a socket read error in passthrough or plaintext mode: after Close
// errClosed; otherwise the socket's own error (io.EOF, a *net.OpError, ...), unwrapped, so that
// errors read the same as on the bare socket a driver's own transport reads (crypto/tls also
// needs io.EOF bare to tell a clean end at a record boundary). A timeout and io.EOF are not
// sticky; anything else becomes the sticky read error. Called with rmu held.
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

// writeError is readError for a socket Write, with the sticky write error. Called with wmu
// held.
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

// Write writes p; what it does depends on the state:
//   - handshake: appends p to the current flight and returns len(p)
//     without touching the socket (the next Read, StartPassthrough or
//     StartPlaintext sends the flight as one PRELOGIN message);
//   - passthrough and plaintext: makes exactly one Write of p itself on
//     the socket, without copying, and blocks while the socket does not
//     accept the bytes.
//
// Concurrent Writes are serialised. A timeout is not sticky.
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
			// A TLS layer that sends an alert during the handshake (it refuses the peer's
			// version, suites or certificate) does not read again: send the flight now,
			// or the peer would see the connection close without being told why.
			if err := c.flushLocked(); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	default:
		return 0, c.stickyErr(s)
	}
}

// Close closes the socket, which unblocks a Read and a Write in other
// goroutines; they and every later call return an error matching
// net.ErrClosed, bytes read ahead included: they are dropped, and the
// buffer goes back to the pool at once, or when a Read in progress returns.
// A second Close returns such an error too. Close sends nothing: a flight
// still buffered in handshake mode is dropped.
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

// SetDeadline sets the socket's read and write deadlines; they apply in
// every mode. A Read or Write that times out returns a net.Error whose
// Timeout reports true, the Conn does not fail, and a later call with a
// new deadline may succeed (except when a handshake message was partly
// read or written, which loses the framing and fails the Conn).
func (c *Conn) SetDeadline(t time.Time) error { return c.raw.SetDeadline(t) }

// SetReadDeadline sets the socket's read deadline; see SetDeadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.raw.SetReadDeadline(t) }

// SetWriteDeadline sets the socket's write deadline; see SetDeadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }
