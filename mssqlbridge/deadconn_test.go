package mssqlbridge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// faultCounter is a tdstest Faults.Hook that does action at phase on the first connection, the
// times-th time that connection reaches it, and counts the connections the server accepted. At
// PhaseIdle it acts 20 ms into the idle time, as a server that drops an idle connection does:
// a fault sent with the response's last byte could reach go-mssqldb while it still finishes
// that response, which is not the case under test.
type faultCounter struct {
	phase  tdstest.Phase
	action tdstest.Action
	times  int

	mu    sync.Mutex
	conns int
	seen  int
}

func (f *faultCounter) hook(conn int, p tdstest.Phase) tdstest.Action {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p == tdstest.PhasePrelogin {
		f.conns = max(f.conns, conn)
	}
	if conn != 1 || p != f.phase {
		return tdstest.ActionNone
	}
	f.seen++
	if f.seen == f.times {
		if p == tdstest.PhaseIdle {
			time.Sleep(20 * time.Millisecond)
		}
		return f.action
	}
	return tdstest.ActionNone
}

func (f *faultCounter) accepted() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

// faultDB starts a tdstest server in mode m with f as its fault hook and returns a bridged
// *sql.DB for it, the server's certificate trusted, with extra DSN parameters.
func faultDB(t *testing.T, m tdstest.Mode, f *faultCounter, extra ...string) *sql.DB {
	t.Helper()
	cfg := m.Config
	cfg.Faults.Hook = f.hook
	srv := startServer(t, cfg)
	params := append([]string{"encrypt=" + m.Encrypt, "certificate=" + srv.CAFile(), "hostnameincertificate=localhost"}, extra...)
	db, err := bridgedDB(t, srv.DSN(params...))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// queryCtx runs SELECT 1, or the 1 MiB query when big, on q with a bounded context, and reads
// its rows to the end: go-mssqldb's Rows.Close before the end sends an ATTENTION and waits for
// its acknowledgement, so the connection would not be idle when the test says it is.
func queryCtx(q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, big bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	query := "SELECT 1"
	if big {
		query = "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 524288)"
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	var v any
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// idleCloses are the ways a server drops an idle connection: FIN, RST, an unsolicited ERROR
// then FIN (as KILL ends a session), and a TLS close_notify then FIN (a TLS stack's orderly
// shutdown, which leaves a record unread in front of the FIN).
var idleCloses = []tdstest.Action{tdstest.ActionClose, tdstest.ActionReset, tdstest.ActionError, tdstest.ActionCloseNotify}

// dsnTimeouts are DSN settings under which the dead-connection check must work as without
// them: go-mssqldb sets a socket deadline before every Read and Write with a connection
// timeout, and that deadline has passed when the connection idled longer.
var dsnTimeouts = []struct {
	name   string
	params []string
	idle   time.Duration // how long the connection idles: past the connection timeout
}{
	{"no timeouts", nil, idleCheckAfter + 100*time.Millisecond},
	{"connection timeout=1", []string{"connection timeout=1", "dial timeout=1"}, 1300 * time.Millisecond},
}

// TestDeadPooledConnection: in every encryption mode, with and without DSN timeouts, a pooled
// connection that the server dropped while it sat idle (idleCloses) never fails the
// application's next query: the conn finds it dead before sending, go-mssqldb takes the error
// for a bad connection, and database/sql runs the query on a new connection.
func TestDeadPooledConnection(t *testing.T) {
	for _, m := range tdstest.Modes() {
		for _, a := range idleCloses {
			for _, to := range dsnTimeouts {
				t.Run(m.Name+"/"+a.String()+"/"+to.name, func(t *testing.T) {
					t.Parallel()
					f := &faultCounter{phase: tdstest.PhaseIdle, action: a, times: 2}
					db := faultDB(t, m, f, to.params...)
					if err := queryCtx(db, false); err != nil {
						t.Fatal(err)
					}
					time.Sleep(to.idle)
					if err := queryCtx(db, false); err != nil {
						t.Fatalf("the query after the idle %v failed: %v", a, err)
					}
					if n := f.accepted(); n != 2 {
						t.Fatalf("%d connections, want 2: the dead one was not replaced", n)
					}
				})
			}
		}
	}
}

// earlyErrorTries is how many times TestHealthyNotDropped runs the early-error batch and a
// query after it, per mode and way of holding the connection.
const earlyErrorTries = 25

// TestHealthyNotDropped: a request written while the previous response is still being read is
// never refused as dead. go-mssqldb returns from a batch at a DONE with the error bit that comes
// before any result set, and writes the next request while its reader goroutine still reads the
// rest of that response (here: the server's early-error response, INFO messages over some
// hundred packets after the error). In every mode, on a sql.Conn, in a sql.Tx and through the
// pool, the query after it must succeed on the same connection every time.
func TestHealthyNotDropped(t *testing.T) {
	ways := []struct {
		name string
		run  func(ctx context.Context, db *sql.DB, tries int) error
	}{
		{"sql.Conn", func(ctx context.Context, db *sql.DB, tries int) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			return earlyErrorThenSelect(ctx, conn, tries)
		}},
		{"sql.Tx", func(ctx context.Context, db *sql.DB, tries int) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if err := earlyErrorThenSelect(ctx, tx, tries); err != nil {
				_ = tx.Rollback()
				return err
			}
			return tx.Commit()
		}},
		{"pool", func(ctx context.Context, db *sql.DB, tries int) error {
			db.SetMaxOpenConns(1)
			return earlyErrorThenSelect(ctx, db, tries)
		}},
	}
	for _, m := range tdstest.Modes() {
		for _, w := range ways {
			t.Run(m.Name+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				f := newEarlyErrorHook()
				cfg := m.Config
				cfg.Faults.Hook = f.hook
				srv := startServer(t, cfg)
				db, err := bridgedDB(t, srv.DSN("encrypt="+m.Encrypt, "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := w.run(ctx, db, earlyErrorTries); err != nil {
					t.Fatal(err)
				}
				if n := f.connections(); n != 1 {
					t.Fatalf("%d connections, want 1: %d healthy ones dropped", n, n-1)
				}
			})
		}
	}
}

// earlyErrorThenSelect runs, tries times, a query the server answers with the early-error
// response (earlyErrorHook) and then SELECT 1, which must return 1.
func earlyErrorThenSelect(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, tries int) error {
	for i := range tries {
		rows, err := q.QueryContext(ctx, "SELECT 2") // a query returns at the error's DONE
		if err == nil {
			_ = rows.Close()
		}
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 50000 {
			return fmt.Errorf("try %d: the early-error batch gave %v, want error 50000", i, err)
		}
		var v int
		if err := q.QueryRowContext(ctx, "SELECT 1").Scan(&v); err != nil || v != 1 {
			return fmt.Errorf("try %d: SELECT 1 after the early error: %d, %w", i, v, err)
		}
	}
	return nil
}

// earlyErrorHook is a tdstest Faults.Hook that answers every other request of a connection
// (the 1st, 3rd, ...) with ActionEarlyError (tdstest.EveryOther), and counts the connections.
type earlyErrorHook struct {
	every    func(conn int, p tdstest.Phase) tdstest.Action
	mu       sync.Mutex
	maxConns int
}

func newEarlyErrorHook() *earlyErrorHook {
	return &earlyErrorHook{every: tdstest.EveryOther(tdstest.PhaseQuery, tdstest.ActionEarlyError)}
}

func (h *earlyErrorHook) hook(conn int, p tdstest.Phase) tdstest.Action {
	h.mu.Lock()
	h.maxConns = max(h.maxConns, conn)
	h.mu.Unlock()
	return h.every(conn, p)
}

func (h *earlyErrorHook) connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxConns
}

// TestDeadConnectionError: on a connection the application holds (sql.Conn), database/sql
// cannot retry, so the error of a connection found dead reaches it, as a bad connection
// (driver.ErrBadConn), with the conn's text naming the host (go-mssqldb keeps only the text of
// a send error). At the conn, the error is a *DeadConnectionError matching ErrDeadConnection
// and io.EOF, and nothing of the request reached the server.
func TestDeadConnectionError(t *testing.T) {
	t.Run("sql.Conn", func(t *testing.T) {
		f := &faultCounter{phase: tdstest.PhaseIdle, action: tdstest.ActionClose, times: 2}
		srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup, Faults: tdstest.Faults{Hook: f.hook}})
		logs, logger := newLogBuffer()
		db, err := bridgedDB(t, srv.DSN("encrypt=disable"), WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := queryCtx(conn, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(idleCheckAfter + 100*time.Millisecond)
		err = queryCtx(conn, false)
		t.Log(err)
		if !errors.Is(err, driver.ErrBadConn) || !strings.Contains(err.Error(), "found dead before a request, nothing sent") {
			t.Fatalf("got %v, want a bad connection found dead", err)
		}
		found := false
		for _, e := range logs.events(t) {
			found = found || e["msg"] == "mssqlbridge: dead connection" && e["error"] == "EOF"
		}
		if !found {
			t.Errorf("no dead-connection event in the log:\n%s", logs)
		}
	})
	t.Run("conn", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		got := make(chan int, 1) // packets the server read after the PRELOGIN
		go func() {
			s, err := ln.Accept()
			if err != nil {
				got <- -1
				return
			}
			defer s.Close()
			rd := tds.NewReader(s, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize})
			if _, _, err := rd.ReadPacket(); err != nil {
				got <- -1
				return
			}
			_, _ = s.Write(packet(tds.TypeTabularResult, serverReplyPayload(prelogin.EncryptNotSup)))
			n := 0
			for ; n < 1; n++ { // LOGIN7, echoed; then FIN
				_, body, err := rd.ReadPacket()
				if err != nil {
					break
				}
				_ = writeEcho(s, body)
			}
			_ = s.(*net.TCPConn).CloseWrite()
			for ; ; n++ {
				if _, _, err := rd.ReadPacket(); err != nil {
					break
				}
			}
			got <- n
		}()
		c, err := dialTest(t, testSettings(t, newTestPKI(t), msdsn.EncryptionDisabled), ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		exchangePrelogin(t, c)
		roundTrip(t, c, tds.TypeLogin7, buildLogin7(testLogin7{user: "sa"}))
		time.Sleep(idleCheckAfter + 100*time.Millisecond)
		_, err = c.Write(packet(tds.TypeSQLBatch, []byte("first"))) // the first request after login
		t.Log(err)
		var de *DeadConnectionError
		if !errors.As(err, &de) || !errors.Is(err, ErrDeadConnection) || !errors.Is(err, io.EOF) {
			t.Fatalf("got %v, want a *DeadConnectionError for io.EOF", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || ne.Timeout() {
			t.Fatalf("%v is not a net.Error that is not a timeout", err)
		}
		if de.Host != "localhost" || de.Idle < idleCheckAfter || de.Idle > time.Minute {
			t.Errorf("Host %q, Idle %v: want the time since the login response", de.Host, de.Idle)
		}
		_ = c.Close()
		if n := <-got; n != 1 {
			t.Errorf("the server read %d packets after the PRELOGIN, want 1 (nothing of the batch)", n)
		}
	})
}

// TestDeadAfterReadError: in every mode, when the server closes (FIN) or resets (RST) the
// connection in the middle of a 1 MiB result, that query fails, and the next query on the same
// *sql.DB succeeds: the next request on the dead connection fails before sending, as a bad
// connection, and database/sql runs it on a new one.
func TestDeadAfterReadError(t *testing.T) {
	for _, m := range tdstest.Modes() {
		for _, a := range []tdstest.Action{tdstest.ActionClose, tdstest.ActionReset} {
			t.Run(m.Name+"/"+a.String(), func(t *testing.T) {
				f := &faultCounter{phase: tdstest.PhaseResult, action: a, times: 1}
				db := faultDB(t, m, f)
				if err := queryCtx(db, true); err == nil {
					t.Fatalf("the query the server %v halfway succeeded", a)
				} else {
					t.Logf("query cut halfway: %v", err)
				}
				if err := queryCtx(db, false); err != nil {
					t.Fatalf("the next query failed: %v", err)
				}
				if n := f.accepted(); n != 2 {
					t.Fatalf("%d connections, want 2", n)
				}
			})
		}
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// BenchmarkCheckAlive is the cost of one look at an idle socket (the system call checkAlive
// makes after idleCheckAfter).
func BenchmarkCheckAlive(b *testing.B) {
	c, _ := tcpPair(b)
	rc := rawConnOf(c)
	if rc == nil {
		b.Skip("no syscall.RawConn on this platform")
	}
	for b.Loop() {
		if err := lookAtSocket(rc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckAliveBusy is what checkAlive costs a request on a connection in use (the look
// at the socket not due): the price every request pays for the check.
func BenchmarkCheckAliveBusy(b *testing.B) {
	c := &conn{}
	p := packet(tds.TypeSQLBatch, []byte("SET NOCOUNT ON"))
	for b.Loop() {
		c.lastRead.Store(monotime()) // the previous response was just read
		if err := c.checkAlive(p); err != nil {
			b.Fatal(err)
		}
	}
}
