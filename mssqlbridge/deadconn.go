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
// (sql.Conn, sql.Tx) or retries are disabled. What the application then sees is
// driver.ErrBadConn from database/sql, or go-mssqldb's own error, which keeps only the text of
// this one ("failed to send SQL Batch: mssqlbridge: connection to ... found dead before a
// request, nothing sent ..."): errors.Is(err, ErrDeadConnection) holds at the conn and in the
// logs (see WithLogger), not at the application.
var ErrDeadConnection = errors.New("mssqlbridge: connection is dead")

// idleCheckAfter is how long a connection must have gone without reading from the socket or
// starting a request before the next request's first packet looks at the socket (see
// conn.checkAlive). The look is one non-blocking system call (BenchmarkCheckAlive), a small
// part of a round trip even on loopback; connections in use never pay it, and one idle this
// long pays it once per request. What the look finds (a peer that closed or reset the
// connection) happens to pooled connections, which sit idle far longer.
const idleCheckAfter = 50 * time.Millisecond

// DeadConnectionError reports a connection found dead before a request was sent on it. Cause
// is what showed it: io.EOF when the server closed the connection (FIN, or a half-close behind
// bytes not yet read), the system call error of a reset (ECONNRESET), or the read error that
// ended an earlier response (the connection was then dead already, and this request never
// left).
type DeadConnectionError struct {
	Host  string        // the host the driver dialed
	Addr  string        // the server's address
	Idle  time.Duration // how long the connection had neither read from the socket nor started a request
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
// when the connection is dead for certain:
//   - an earlier Read got an error other than a timeout from the layer below (see
//     noteReadErr), or
//   - the connection has neither read from the socket nor started a request for
//     idleCheckAfter, and one look at the socket finds that the peer closed or reset it
//     (lookAtSocket).
//
// Nothing else marks a connection dead. In particular bytes waiting, on the socket or read
// ahead, never do: they may be the rest of a response go-mssqldb stopped reading (it returns
// from a query at a DONE with the error bit while its reader goroutine goes on reading), or,
// under TLS, records a server may send at any time. A server that half-closed can never answer
// a request, whatever is still unread in front of its FIN. The look neither blocks, nor waits
// for a Read in progress, nor depends on the deadlines go-mssqldb sets. Where the socket cannot
// be looked at (not a syscall.Conn, or a platform without the call) only the first rule applies.
func (c *conn) checkAlive(p []byte) error {
	open := c.msgOpen
	c.msgOpen = len(p) >= tds.HeaderSize && tds.Status(p[1])&tds.StatusEOM == 0
	if open || !startsRequest(p) {
		return nil
	}
	now := monotime()
	idle := time.Duration(now - max(c.lastRequest, c.lastRead.Load()))
	c.lastRequest = now
	cause := c.readDead()
	if cause == nil && idle >= idleCheckAfter && c.sys != nil {
		cause = lookAtSocket(c.sys)
	}
	if cause == nil {
		return nil
	}
	c.msgOpen = false
	addr := c.raw.RemoteAddr().String()
	c.settings.logDeadConn(c.host, addr, idle, cause)
	return &DeadConnectionError{Host: c.host, Addr: addr, Idle: idle, Cause: cause}
}

// epoch is the origin of monotime.
var epoch = time.Now()

// monotime returns the time on the monotonic clock, in nanoseconds since epoch: what
// conn.lastRead and conn.lastRequest hold.
func monotime() int64 { return int64(time.Since(epoch)) }

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
