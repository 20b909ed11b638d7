package mssqlbridge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/fsm"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// state is the mode of a conn. The only way a conn changes state is conn.transition, which
// checks every move against transitions:
//
//	stateNew ──PRELOGIN exchanged──┬─> stateFull ─────────┐
//	   │                           ├─> stateLoginOnly ──┐ │
//	   │                           └─> statePlain <─────┘ │ (first LOGIN7 packet sent)
//	   └──refused──> stateFailed                          │
//	any state ──Close──> stateClosed <────────────────────┘
type state uint8

const (
	// stateNew: nothing has been exchanged with the server yet, except in strict mode, where
	// the TLS handshake has run on dial. The driver's first Write must be its PRELOGIN.
	stateNew state = iota
	// stateFull: every packet, both ways, through TLS.
	stateFull
	// stateLoginOnly: the handshake is done; the next Write (the first LOGIN7 packet) goes
	// through TLS, then the conn switches to statePlain. Reads wait for that switch.
	stateLoginOnly
	// statePlain: plaintext both ways (no encryption, or login-only after the LOGIN7 packet).
	statePlain
	// stateFailed: the PRELOGIN exchange was refused or failed; every call but Close returns
	// the sticky error, and nothing more is ever written.
	stateFailed
	// stateClosed: Close was called.
	stateClosed
)

var stateNames = [...]string{
	stateNew:       "new",
	stateFull:      "full",
	stateLoginOnly: "login-only",
	statePlain:     "plain",
	stateFailed:    "failed",
	stateClosed:    "closed",
}

func (s state) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// errState is the error of a call that finds the conn in a state it has no case for: a
// state added without its cases. Nothing is written.
func errState(op string, s state) error {
	return fmt.Errorf("mssqlbridge: internal error: %s in unknown state %v", op, s)
}

var transitions = fsm.Table{
	stateNew:       1<<stateFull | 1<<stateLoginOnly | 1<<statePlain | 1<<stateFailed | 1<<stateClosed,
	stateFull:      1 << stateClosed,
	stateLoginOnly: 1<<statePlain | 1<<stateFailed | 1<<stateClosed,
	statePlain:     1 << stateClosed,
	stateFailed:    1 << stateClosed,
	stateClosed:    0,
}

// conn is the net.Conn go-mssqldb gets from the connector's dialer. The driver, configured
// with its own encryption disabled, talks plaintext TDS to it; the conn negotiates the user's
// encryption with the server on the driver's PRELOGIN (see negotiate.go), runs TLS through a
// bridge.Conn, and from then on maps each driver Write (one TDS packet) to one TLS record and
// passes the driver's Reads to the tls.Conn or the bridge (see Read).
//
// Concurrency: as net.Conn requires, every method may be called from any goroutine. Reads are
// serialized by rmu and Writes by wmu, so a Read and a Write (go-mssqldb's ATTENTION on
// cancel) run concurrently. Close unblocks both by closing the socket.
type conn struct {
	raw      net.Conn
	settings *settings
	host     string          // the host the driver dialed: certificate checks use it
	dialCtx  context.Context // bounds the PRELOGIN exchange; dropped when it ends (see negotiate)
	strict   bool            // TDS 8.0: TLS ran on dial

	sm    fsm.Machine[state] // changed only by transition; the sticky error of stateFailed
	ready chan struct{}      // closed when the conn leaves stateNew
	plain chan struct{}      // closed when the conn leaves stateLoginOnly (or never enters it)
	done  chan struct{}      // closed by Close

	// Set during negotiation (tlsConn and bridge in strict mode: at dial), before ready is
	// closed; read-only afterwards.
	mode    prelogin.Mode // what the PRELOGIN exchange settled (ModeStrict: strict is set)
	tlsConn *tls.Conn     // nil without TLS
	bridge  *bridge.Conn  // the bridge over raw; nil only before negotiation
	plainW  net.Conn      // writes in statePlain: the bridge in plaintext mode

	// The write side, then the read side: each written by its own goroutine on every call,
	// so they are kept apart (a cache line written by one core and read by another moves).
	wdl deadline   // write deadline, applied lazily
	wmu sync.Mutex // serializes Writes
	out batch      // the socket's writes of an unfinished message (see batch)
	// lastRequest is when (monotime) the driver last began a request, and msgOpen whether
	// the last packet written left its message open (see checkAlive). Guarded by wmu.
	lastRequest int64
	msgOpen     bool
	// loginSent: strict mode has sent the first LOGIN7 packet (see writeStrictLogin).
	// loginOnly: the LOGIN7 went through TLS in login-only mode, and everything since in
	// plaintext. Both guarded by wmu.
	loginSent, loginOnly bool
	// login collects a login-only LOGIN7 message that the driver split into several packets
	// (see writeLogin); loginHdr is the header of its first packet. Guarded by wmu.
	login    []byte
	loginHdr tds.Header

	rdl     deadline   // read deadline, applied lazily
	rmu     sync.Mutex // serializes Reads
	pending []byte     // the patched PRELOGIN reply, served first; set by negotiate before ready, then guarded by rmu
	// in serves every Read after the PRELOGIN reply: the tls.Conn in full encryption (see
	// readTLS), the bridge in plaintext mode otherwise. Set like pending; read-only afterwards.
	in io.Reader
	// settled is set, under rmu, once the reply is served and the mode settled: from then on
	// Read goes to in without taking rmu.
	settled atomic.Bool
	// dead is the first error other than a timeout that a Read got from the layer below: the
	// connection ended; the next request fails before sending (see checkAlive).
	dead atomic.Pointer[error]
	// lastRead is when (monotime) a socket read last returned bytes; written by socket.Read,
	// read by checkAlive.
	lastRead atomic.Int64

	sys syscall.RawConn // the socket, for checkAlive's look; nil when it has none

	// trace times the connection's phases until the LOGIN7 message is written (see
	// connecttrace.go), then is nil. Set before the conn is returned, then guarded by wmu.
	trace *connTrace
}

func newConn(ctx context.Context, raw net.Conn, s *settings, host string) *conn {
	c := &conn{
		raw:      raw,
		settings: s,
		host:     host,
		dialCtx:  ctx,
		strict:   s.encryption == encryptionStrict,
		ready:    make(chan struct{}),
		plain:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	c.sm.Init(transitions, stateFailed, stateNew)
	c.sys = rawConnOf(raw)
	c.raw = &socket{Conn: raw, rdl: &c.rdl, out: &c.out, lastRead: &c.lastRead}
	c.rdl.set = raw.SetReadDeadline
	c.wdl.set = raw.SetWriteDeadline
	return c
}

func (c *conn) state() state { return c.sm.State() }

// transition is the one place where a conn changes state. It refuses moves the table does not
// allow and reports whether it moved. Entering stateFailed records cause as the sticky error.
func (c *conn) transition(to state, cause error) bool {
	_, ok := c.sm.Move(to, cause, func(from state) {
		if from == stateNew {
			close(c.ready)
		}
		if from == stateLoginOnly || (from == stateNew && to != stateLoginOnly) {
			close(c.plain)
		}
		if to == stateClosed {
			close(c.done)
		}
		if to == stateFailed || to == stateClosed {
			releaseChannelSlot(c)
		}
	})
	return ok
}

// stickyErr returns the error a call should see in state s, or nil if the call may proceed.
func (c *conn) stickyErr(s state) error {
	switch s {
	case stateNew, stateFull, stateLoginOnly, statePlain:
		return nil
	case stateFailed:
		return c.sm.Err()
	case stateClosed:
		return errClosed
	default:
		return errState("call", s)
	}
}

// Write sends p, which go-mssqldb makes exactly one TDS packet. The first Write (the driver's
// PRELOGIN) runs the whole negotiation and the TLS handshake before it returns; an error from
// it means nothing that could carry login data was sent, and the conn then refuses every
// later Write. In full encryption each Write is one TLS record. The socket writes of a message
// of several packets are joined (see batch): a packet that ends a message is on the socket,
// with every packet before it, when Write returns. p is never modified or retained.
func (c *conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	s := c.state()
	switch s {
	case stateNew:
		if err := c.negotiate(p); err != nil {
			return 0, err
		}
		return len(p), nil
	case stateFull, stateLoginOnly, statePlain:
	case stateFailed, stateClosed:
		return 0, c.stickyErr(s)
	default:
		return 0, errState("Write", s)
	}
	if err := c.wdl.enter(); err != nil {
		c.wdl.exit()
		return 0, err
	}
	defer c.wdl.exit()
	n, err := c.writeIn(s, p)
	if err != nil && c.state() == stateClosed {
		err = errClosed
	}
	if c.trace != nil {
		err = c.traceLogin(p, err)
	}
	return min(n, len(p)), err
}

// writeIn writes p, one packet, in state s, once the PRELOGIN exchange has settled how:
// through TLS (stateFull), the login-only way (stateLoginOnly) or in plaintext (statePlain).
// Called with wmu held and the write deadline applied.
func (c *conn) writeIn(s state, p []byte) (int, error) {
	switch s {
	case stateFull:
		if err := c.checkAlive(p); err != nil {
			return 0, err
		}
		c.out.hold.Store(continues(p))
		if c.strict && !c.loginSent {
			return c.writeStrictLogin(p)
		}
		return c.tlsConn.Write(p)
	case stateLoginOnly:
		return c.writeLogin(p)
	case statePlain:
		if c.loginOnly && len(p) > 0 && tds.PacketType(p[0]) == tds.TypeFedAuthToken {
			return 0, fmt.Errorf("%w: a FEDAUTH token message after a login-only LOGIN7 would travel in plaintext; use encrypt=true", ErrSecretOutsideTLS)
		}
		if err := c.checkAlive(p); err != nil {
			return 0, err
		}
		c.out.hold.Store(continues(p))
		return c.plainW.Write(p)
	case stateNew, stateFailed, stateClosed:
		return 0, errState("write", s) // Write handles them
	default:
		return 0, errState("write", s)
	}
}

// Read reads plaintext TDS bytes: first the (patched) PRELOGIN reply, then what the server
// sends. In full encryption the driver's Read goes straight to the tls.Conn, which decrypts
// into its own buffer and copies into p, as with go-mssqldb's own TLS; the bridge under it
// reads the socket in large reads and hands crypto/tls several complete records per read (see
// readTLS). In plaintext it goes to the bridge, whose read-ahead buffer serves it. No copy is
// made here. A Read before the PRELOGIN exchange, or in login-only mode a Read past the
// PRELOGIN reply before the LOGIN7 packet is sent, waits for it. p may be any size; a Read
// returns as soon as some bytes are available. Bytes already buffered (in the bridge or in
// crypto/tls) are returned even after the read deadline has passed: the deadline applies when
// a read needs the socket (see socket).
//
// Once the reply is served and the mode settled (full or plaintext), Read is one call to c.in
// (the tls.Conn or the bridge, whose own locks serialize Reads) and nothing else, so that the
// path to the socket stays shallow (see "Stack depth" in docs/design.md).
func (c *conn) Read(p []byte) (int, error) {
	if c.settled.Load() {
		n, err := c.in.Read(p)
		if err != nil {
			return n, c.readErr(err)
		}
		return n, nil
	}
	return c.readSlow(p)
}

// readSlow is Read until the conn serves reads from c.in alone: it waits for the PRELOGIN
// exchange, serves the reply, waits in login-only mode for the switch to plaintext, then reads
// through c.in and sets c.settled.
func (c *conn) readSlow(p []byte) (int, error) {
	// Once the mode is settled: no channel operations.
	settled := func(s state) bool { return s == stateFull || s == statePlain }
	if !settled(c.state()) {
		if err := c.await(c.ready); err != nil {
			return 0, err
		}
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(c.pending) > 0 {
		if err := c.stickyErr(c.state()); err != nil {
			return 0, err
		}
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil // an idle connection keeps nothing of the reply
		}
		return n, nil
	}
	if s := c.state(); !settled(s) {
		if err := c.await(c.plain); err != nil {
			return 0, err
		}
	}
	c.settled.Store(true)
	n, err := c.in.Read(p)
	if err != nil {
		err = c.readErr(err)
	}
	return n, err
}

// readErr returns the error a Read reports for err from the layer below: errClosed once the
// conn is closed, err otherwise.
func (c *conn) readErr(err error) error {
	if c.state() == stateClosed {
		return errClosed
	}
	c.noteReadErr(err)
	return err
}

// readTLS makes every later Read go to tc, a tls.Conn running on the bridge b in passthrough
// mode, which from now on hands tc several complete application-data records per read.
// Called before the conn leaves stateNew.
func (c *conn) readTLS(tc *tls.Conn, b *bridge.Conn) error {
	if err := b.CoalesceRecords(tc.ConnectionState()); err != nil {
		return fmt.Errorf("mssqlbridge: TLS reads: %w", err)
	}
	c.in = tc
	return nil
}

// await blocks until ch is closed or the conn is closed, then returns the error that stops
// reads, if any.
func (c *conn) await(ch chan struct{}) error {
	select {
	case <-ch:
	case <-c.done:
		return errClosed
	}
	return c.stickyErr(c.state())
}

// closeNotifyTimeout bounds the wait for the TLS close_notify alert to leave in Close.
const closeNotifyTimeout = 100 * time.Millisecond

// Close closes the connection and unblocks any Read or Write. From then on every Read and
// Write fails at once with an error matching net.ErrClosed, whatever the bridge or crypto/tls
// still hold: go-mssqldb may hand a closed connection's read buffer to another connection
// while its reader goroutine still runs, and that reader must not copy another byte into it.
// The bridge's read-ahead buffer goes back to its pool, and a LOGIN7 message partly collected
// in login-only mode is cleared. In full encryption Close sends a TLS close_notify first, as
// go-mssqldb's own TLS does (crypto/tls skips it if a Write is blocked). Close does not wait
// more than closeNotifyTimeout for the alert: crypto/tls would wait up to 5 s when the server
// has stopped reading and the socket's send buffer is full; past the bound the socket is
// closed, and the alert is given up without an error. A second Close returns an error
// matching net.ErrClosed.
func (c *conn) Close() error {
	prev := c.state()
	if !c.transition(stateClosed, nil) {
		return errClosed
	}
	c.settled.Store(false) // every later Read takes readSlow, which sees stateClosed
	if c.wmu.TryLock() {   // else a Write is running, and it clears what it collected
		c.clearLogin()
		c.wmu.Unlock()
	}
	var err error
	c.out.hold.Store(false) // the alert goes out at once, with anything held
	if prev == stateFull && c.tlsConn != nil {
		var cut atomic.Bool
		t := time.AfterFunc(closeNotifyTimeout, func() {
			cut.Store(true)
			_ = c.raw.Close()
		})
		err = c.tlsConn.Close()
		t.Stop()
		if cut.Load() {
			err = nil // the alert could not leave in time; the connection is closed all the same
		}
	}
	if prev != stateNew && c.bridge != nil { // set before the conn left stateNew
		_ = c.bridge.Close() // drops what it read ahead
	}
	if cerr := c.raw.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mssqlbridge: close: %w", err)
	}
	return nil
}

// LocalAddr returns the socket's local address.
func (c *conn) LocalAddr() net.Addr { return c.raw.LocalAddr() }

// RemoteAddr returns the socket's remote address.
func (c *conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// SetDeadline sets both deadlines. It is cheap: the value is stored and reaches the socket
// only when a call needs the socket (see deadline).
func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.rdl.store(t), c.wdl.store(t))
}

// SetReadDeadline sets the read deadline (stored; see SetDeadline).
func (c *conn) SetReadDeadline(t time.Time) error { return c.rdl.store(t) }

// SetWriteDeadline sets the write deadline (stored; see SetDeadline).
func (c *conn) SetWriteDeadline(t time.Time) error { return c.wdl.store(t) }
