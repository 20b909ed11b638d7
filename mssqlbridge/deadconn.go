package mssqlbridge

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/tdsbridge/tdsbridge/tds"
)

// ErrDeadConnection: the connection was found dead when the driver began a request on it, and
// nothing of the request was sent. The error returned is a *DeadConnectionError; go-mssqldb
// classifies it as a bad connection (it is a net.Error), so database/sql retries the request on
// another connection and the application does not see it, unless it holds the connection
// (sql.Conn, sql.Tx) or retries are disabled.
var ErrDeadConnection = errors.New("mssqlbridge: connection is dead")

// idleCheckAfter is how long a connection must have gone without starting a request before
// the next request's first packet checks the socket (see conn.checkAlive). The check is one
// non-blocking system call, about a microsecond (BenchmarkCheckAlive); a round trip on loopback
// costs over a hundred. Connections used back to back never pay it, and one idle this long
// pays it once per request, less than 0.01% of the time it sat idle. What the check finds
// (a peer that closed or reset the connection, a server that sent bytes nobody asked for)
// happens to pooled connections, which sit idle far longer.
const idleCheckAfter = 50 * time.Millisecond

// DeadConnectionError reports a connection found dead before a request was sent on it. Cause
// is what showed it: io.EOF when the server closed the connection (FIN), the system call error
// of a reset (ECONNRESET), the read error that ended an earlier response (the connection was
// then dead already, and this request never left), or an error naming the unsolicited bytes
// the server sent while the connection sat idle (in plaintext, where a server sends nothing
// unasked).
type DeadConnectionError struct {
	Host  string        // the host the driver dialed
	Addr  string        // the server's address
	Idle  time.Duration // how long the connection had not started a request
	Cause error
}

func (e *DeadConnectionError) Error() string {
	return fmt.Sprintf("mssqlbridge: connection to %s (%s) found dead before a request, nothing sent (idle %v): %v",
		e.Host, e.Addr, e.Idle.Round(time.Millisecond), e.Cause)
}

// Unwrap returns ErrDeadConnection and the cause.
func (e *DeadConnectionError) Unwrap() []error { return []error{ErrDeadConnection, e.Cause} }

// Timeout reports false: the connection is dead, not slow. With Temporary, it makes a
// *DeadConnectionError a net.Error, which go-mssqldb takes for a bad connection.
func (e *DeadConnectionError) Timeout() bool { return false }

// Temporary reports false (see Timeout).
func (e *DeadConnectionError) Temporary() bool { return false }

// errUnsolicited reports bytes a server sent on an idle plaintext connection.
var errUnsolicited = errors.New("the server sent bytes while the connection was idle")

// startsRequest reports whether p is the first packet of a request: a client message that a
// response answers (SQL batch, RPC, transaction manager request, bulk load data). ATTENTION is
// not one: it is written while a response is being read.
func startsRequest(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	switch tds.PacketType(p[0]) {
	case tds.TypeSQLBatch, tds.TypeRPC, tds.TypeTransactionManager, tds.TypeBulkLoad:
		return true
	}
	return false
}

// checkAlive is called by Write, with wmu held, for every packet written after the login. At
// the first packet of a request it returns a *DeadConnectionError, before anything is sent,
// when an earlier read ended the connection (see noteReadErr), or when the connection has not
// started a request for idleCheckAfter and one non-blocking look at the socket finds it closed
// or reset by the peer or, in plaintext, holding bytes nobody asked for (on the socket or read
// ahead by the bridge). Under TLS bytes that arrived while idle are left for crypto/tls, which
// must read them (a TLS 1.3 server may send session tickets or a KeyUpdate at any time): there
// only EOF or a reset mark the connection dead. Where the socket cannot be looked at (not a
// syscall.Conn, or a platform without the call) only the first rule applies, and while a Read
// is in progress (a net.Conn allows one beside a Write; go-mssqldb does not begin a request
// while it reads) the look is skipped: the connection is in use, and the look must never wait.
func (c *conn) checkAlive(p []byte) error {
	open := c.msgOpen
	c.msgOpen = len(p) >= tds.HeaderSize && tds.Status(p[1])&tds.StatusEOM == 0
	if open || !startsRequest(p) {
		return nil
	}
	now := time.Now()
	idle := now.Sub(c.lastRequest)
	c.lastRequest = now
	cause := c.readDead()
	if cause == nil && idle >= idleCheckAfter {
		plain := c.state() == statePlain
		c.bridge.TryIdle(func(buffered int) {
			switch {
			case plain && buffered > 0:
				cause = fmt.Errorf("%w (%d bytes read ahead)", errUnsolicited, buffered)
			case c.sys != nil:
				cause = peekSocket(c.sys, plain)
			}
		})
	}
	if cause == nil {
		return nil
	}
	c.msgOpen = false
	addr := c.raw.RemoteAddr().String()
	c.settings.logDeadConn(c.host, addr, idle, cause)
	return &DeadConnectionError{Host: c.host, Addr: addr, Idle: idle, Cause: cause}
}

// noteReadErr records err, an error from the layer below a Read, as the end of the connection
// unless it is a timeout (after which a Read may be tried again) or the conn was closed.
func (c *conn) noteReadErr(err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return
	}
	c.dead.CompareAndSwap(nil, &err)
}

// readDead returns the error that ended the connection's reads, or nil.
func (c *conn) readDead() error {
	if p := c.dead.Load(); p != nil {
		return *p
	}
	return nil
}

// rawConnOf returns the socket's syscall.RawConn, or nil when it has none.
func rawConnOf(nc net.Conn) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
