package bridge

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

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
//
// Errors: in handshake mode the first error fails the Conn (StateFailed)
// and every later call returns it. In passthrough and plaintext mode a
// permanent socket error is sticky for its own direction only, so that a
// failed Write does not hide bytes already read ahead; io.EOF is returned
// as is, and timeouts are never sticky.
type Conn struct {
	raw  net.Conn
	role Role
	pool *bufPool // read-ahead buffers of the configured size

	// state is the current State; written only by transition, under smu.
	state atomic.Uint32
	smu   sync.Mutex
	err   error // first permanent error (StateFailed); protected by smu

	// Read side. Everything below up to coalesce is protected by rmu.
	rmu  sync.Mutex
	ra   readAhead // passthrough and plaintext
	rerr error     // first permanent read error in passthrough or plaintext mode
	// batch is the empty-record threshold set by CoalesceRecords (0: off):
	// every passthrough Read coalesces as in Reader's coalescing mode.
	batch int
	// filled records whether the last socket read of a passthrough Read
	// filled the space it was given, so that more may be waiting; it
	// decides between a direct read and the read-ahead (see readDirect).
	filled bool
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

	// steer carries the modes a Reader sets around its reads of the
	// tls.Conn and what each passthrough Read handed over (see readSteer).
	steer readSteer

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
// The Conn owns raw from now on: use raw only through the Conn (see Raw).
func New(raw net.Conn, opts Options) *Conn {
	c := &Conn{raw: raw, role: opts.Role, pool: poolFor(max(opts.ReadAheadSize, DefaultReadAheadSize))}
	if opts.Direct {
		c.ra.init(c.pool, nil)
		c.state.Store(uint32(StatePassthrough))
		return c
	}
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
func (c *Conn) State() State { return State(c.state.Load()) }

// TryIdle calls f with the number of bytes the bridge has read from the socket in passthrough
// or plaintext mode and not yet handed to a Read, but only when no Read is in progress; while f
// runs no Read can start, so f may look at the socket without racing one. It never waits: it
// reports false, without calling f, when a Read holds the read side.
func (c *Conn) TryIdle(f func(buffered int)) bool {
	if !c.rmu.TryLock() {
		return false
	}
	defer c.rmu.Unlock()
	f(c.ra.buffered())
	return true
}

// Raw returns the underlying socket. Warning: reading from it or writing to
// it bypasses the bridge's buffers and framing and will corrupt the
// connection unless the bridge is no longer used; it is meant for things
// like socket options and file descriptors.
func (c *Conn) Raw() net.Conn { return c.raw }

// Read reads into p; what it reads depends on the state:
//   - handshake: the payload of the peer's next PRELOGIN message, after
//     sending the flight buffered by earlier Writes;
//   - passthrough: at most one TLS record's bytes, from the read-ahead
//     buffer, reading the socket only when nothing is buffered;
//   - plaintext: raw bytes from the read-ahead buffer, reading the socket
//     only when the buffer is empty.
//
// Read blocks until data arrives, the deadline passes or Close is called.
// A timeout is not sticky. In passthrough and plaintext mode the end of
// the stream is io.EOF, unwrapped; during the handshake it is an error
// wrapping io.ErrUnexpectedEOF.
func (c *Conn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	if c.State() != StatePassthrough || len(p) == 0 {
		n, err := c.readOther(p)
		c.rmu.Unlock()
		return n, err
	}
	c.steer.begin()
	n, err := 0, errNeedSocket
	if !c.readDirect(p) {
		n, err = c.readPassthrough(p)
	}
	for err == errNeedSocket {
		// The socket is read here, in Read's own frame (see "Stack depth"
		// in the package documentation): into p itself when readDirect
		// allows, into the read-ahead buffer otherwise.
		if c.readDirect(p) {
			m, rerr := c.raw.Read(p)
			c.filled = m == len(p)
			if m > 0 {
				n, err = c.takeDirect(p, m), nil
				break
			}
			err = rerr
		} else {
			var free []byte
			if free, err = c.ra.free(); err == nil {
				m, rerr := c.raw.Read(free)
				c.filled = m >= len(p)
				err = c.ra.commit(m, rerr)
			}
		}
		if err != nil {
			err = c.readError(err, "bridge: passthrough: read")
			break
		}
		n, err = c.readPassthrough(p)
	}
	c.rmu.Unlock()
	return n, err
}

// readOther is Read in every case but a passthrough Read of at least one
// byte. Called with rmu held.
func (c *Conn) readOther(p []byte) (int, error) {
	switch s := c.State(); s {
	case StatePassthrough:
		return 0, nil // len(p) == 0
	case StatePlaintext:
		return c.readPlaintext(p)
	case StateHandshake:
		return c.readHandshake(p)
	default:
		return 0, c.stickyErr(s)
	}
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
			err = c.writeError(err, s)
		}
		return n, err
	case StateHandshake:
		c.flight = append(c.flight, p...)
		return len(p), nil
	default:
		return 0, c.stickyErr(s)
	}
}

// Close closes the socket, which unblocks a Read and a Write in other
// goroutines; they and every later call return an error matching
// net.ErrClosed. A second Close returns such an error too. Close sends
// nothing: a flight still buffered in handshake mode is dropped.
func (c *Conn) Close() error {
	if err := c.transition(StateClosed, nil); err != nil {
		return errClosed
	}
	return c.raw.Close()
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
