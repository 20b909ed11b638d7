package mssqlbridge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

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
// *sql.DB for it, the server's certificate trusted.
func faultDB(t *testing.T, m tdstest.Mode, f *faultCounter) *sql.DB {
	t.Helper()
	cfg := m.Config
	cfg.Faults.Hook = f.hook
	srv := startServer(t, cfg)
	db, err := bridgedDB(t, srv.DSN("encrypt="+m.Encrypt, "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
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

// TestDeadPooledConnection: in every encryption mode, a pooled connection that the server
// closed (FIN) or reset (RST) while it sat idle, or in plaintext sent an unsolicited ERROR on,
// never fails the application's next query: the conn finds it dead before sending, go-mssqldb
// takes the error for a bad connection, and database/sql runs the query on a new connection.
// Under TLS, where bytes that arrive while idle may be records the server may send at any time,
// such bytes do not mark the connection dead: the unsolicited ERROR then reaches the driver, as
// with go-mssqldb's own transport.
func TestDeadPooledConnection(t *testing.T) {
	for _, m := range tdstest.Modes() {
		for _, a := range []tdstest.Action{tdstest.ActionClose, tdstest.ActionReset, tdstest.ActionError} {
			t.Run(m.Name+"/"+a.String(), func(t *testing.T) {
				f := &faultCounter{phase: tdstest.PhaseIdle, action: a, times: 2}
				db := faultDB(t, m, f)
				if err := queryCtx(db, false); err != nil {
					t.Fatal(err)
				}
				time.Sleep(idleCheckAfter + 100*time.Millisecond)
				err := queryCtx(db, false)
				caught := a != tdstest.ActionError || m.Name == "none" || m.Name == "login-only"
				switch {
				case caught && err != nil:
					t.Fatalf("the query after the idle %v failed: %v", a, err)
				case caught && f.accepted() != 2:
					t.Fatalf("%d connections, want 2: the dead one was not replaced", f.accepted())
				case !caught && err == nil:
					t.Fatal("the unsolicited ERROR under TLS did not reach the driver")
				}
				t.Logf("next query: %v; connections: %d", err, f.accepted())
			})
		}
	}
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
			for ; n < 2; n++ { // LOGIN7 and one batch, echoed; then FIN
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
		if _, err := c.Write(clientPrelogin()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tds.NewReader(c, tds.ReaderConfig{}).ReadMessage(); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, c, tds.TypeLogin7, buildLogin7(testLogin7{user: "sa"}))
		roundTrip(t, c, tds.TypeSQLBatch, []byte("first"))
		time.Sleep(idleCheckAfter + 100*time.Millisecond)
		_, err = c.Write(packet(tds.TypeSQLBatch, []byte("second")))
		t.Log(err)
		var de *DeadConnectionError
		if !errors.As(err, &de) || !errors.Is(err, ErrDeadConnection) || !errors.Is(err, io.EOF) {
			t.Fatalf("got %v, want a *DeadConnectionError for io.EOF", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || ne.Timeout() {
			t.Fatalf("%v is not a net.Error that is not a timeout", err)
		}
		if de.Host != "localhost" || de.Idle < idleCheckAfter {
			t.Errorf("Host %q, Idle %v", de.Host, de.Idle)
		}
		_ = c.Close()
		if n := <-got; n != 2 {
			t.Errorf("the server read %d packets after the PRELOGIN, want 2 (nothing of the second batch)", n)
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
		if err := peekSocket(rc, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckAliveBusy is what checkAlive costs a request on a connection in use (the look
// at the socket not due): the price every request pays for the check.
func BenchmarkCheckAliveBusy(b *testing.B) {
	c := &conn{lastRequest: time.Now().Add(time.Hour)} // never idle long enough
	p := packet(tds.TypeSQLBatch, []byte("SET NOCOUNT ON"))
	for b.Loop() {
		if err := c.checkAlive(p); err != nil {
			b.Fatal(err)
		}
		c.lastRequest = c.lastRequest.Add(time.Hour)
	}
}
