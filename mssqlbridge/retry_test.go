package mssqlbridge

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestSafeToRetry: true for the errors that say nothing of the request was sent, wrapped or
// not; false for the rest, and for a dead connection's error once go-mssqldb kept only its text.
func TestSafeToRetry(t *testing.T) {
	connectErr := &ConnectError{Host: "h:1", Addr: "127.0.0.1:1", Phase: PhaseTCP, Err: syscall.ECONNREFUSED}
	deadErr := &DeadConnectionError{Host: "h", Addr: "127.0.0.1:1", Idle: time.Second, Cause: io.EOF}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"an error of the request", errors.New("mssql: Invalid object name 't'"), false},
		{"a socket timeout", os.ErrDeadlineExceeded, false},
		{"a context deadline", context.DeadlineExceeded, false},
		{"the server closed the connection", io.EOF, false},
		{"a closed conn", errClosed, false},
		{"a connect error", connectErr, true},
		{"a connect error as go-mssqldb wraps a dial's", fmt.Errorf("unable to open tcp connection with host 'h:1': %w", connectErr), true},
		{"a connect a time bound ended", &ConnectError{Host: "h:1", Phase: PhasePrelogin, Err: os.ErrDeadlineExceeded, bound: "dial timeout"}, true},
		{"a dead connection", deadErr, true},
		{"a dead connection, wrapped", fmt.Errorf("send: %w", deadErr), true},
		{"a dead connection as go-mssqldb keeps it", fmt.Errorf("failed to send SQL Batch: %v", deadErr), false},
		{"ErrServerNoEncryption", fmt.Errorf("mssqlbridge: PRELOGIN negotiation: %w",
			&prelogin.NegotiationError{Err: ErrServerNoEncryption, Sent: prelogin.EncryptOn, Reply: prelogin.EncryptNotSup}), true},
		{"ErrServerRequiresEncryption", fmt.Errorf("mssqlbridge: PRELOGIN negotiation: %w",
			&prelogin.NegotiationError{Err: ErrServerRequiresEncryption, Sent: prelogin.EncryptNotSup, Reply: prelogin.EncryptReq}), true},
		{"ErrDriverEncryption", fmt.Errorf("%w: the driver started its own TLS handshake", ErrDriverEncryption), true},
		{"ErrUnexpectedWrite", fmt.Errorf("%w: login-only encryption expects the LOGIN7 packet", ErrUnexpectedWrite), true},
		{"ErrSecretOutsideTLS", fmt.Errorf("%w: a FEDAUTH token message after a login-only LOGIN7", ErrSecretOutsideTLS), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SafeToRetry(tc.err); got != tc.want {
				t.Errorf("SafeToRetry(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestSafeToRetryConnections: the errors real connections return, at the application
// (database/sql over go-mssqldb) and at the conn.
func TestSafeToRetryConnections(t *testing.T) {
	notSup := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup})
	on := startServer(t, tdstest.Config{})
	tests := []struct {
		name  string
		dsn   string
		query string
		want  bool
	}{
		{"a refusal", notSup.DSN("encrypt=true"), "SELECT 1", true},
		{"nothing listening", dsnFor(closedAddr(t), "encrypt=true"), "SELECT 1", true},
		{"an untrusted certificate", on.DSN("encrypt=true"), "SELECT 1", true},
		{"an error of the request", on.DSN("encrypt=true", "certificate="+on.CAFile()), "SELECT no_such_column FROM no_such_table", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bridgedDB(t, tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = db.ExecContext(ctx, tc.query)
			t.Log(err)
			if err == nil {
				t.Fatal("no error")
			}
			if got := SafeToRetry(err); got != tc.want {
				t.Errorf("SafeToRetry = %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("the driver's first packet is not PRELOGIN", func(t *testing.T) {
		pki := newTestPKI(t)
		srv := newFakeServer(t, pki, prelogin.EncryptOn, false)
		c, err := dialTest(t, testSettings(t, pki, msdsn.EncryptionRequired), srv.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Write(packet(tds.TypeSQLBatch, []byte("SELECT 1")))
		t.Log(err)
		if !errors.Is(err, ErrUnexpectedWrite) || !SafeToRetry(err) {
			t.Fatalf("got %v, SafeToRetry %v; want ErrUnexpectedWrite, safe to retry", err, SafeToRetry(err))
		}
	})
	t.Run("login only: a request in place of LOGIN7", func(t *testing.T) {
		pki := newTestPKI(t)
		srv := newFakeServer(t, pki, prelogin.EncryptOff, false)
		c, err := dialTest(t, testSettings(t, pki, msdsn.EncryptionOff), srv.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		exchangePrelogin(t, c)
		_, err = c.Write(packet(tds.TypeSQLBatch, []byte("SELECT 1")))
		t.Log(err)
		var ce *ConnectError
		if !errors.Is(err, ErrUnexpectedWrite) || errors.As(err, &ce) || !SafeToRetry(err) {
			t.Fatalf("got %v, SafeToRetry %v; want a bare ErrUnexpectedWrite, safe to retry", err, SafeToRetry(err))
		}
	})
}

// TestSafeToRetryDeadConnection: a connection the server closed while idle, held by the
// application in a sql.Conn. The conn's Write returns a *DeadConnectionError (safe to retry);
// go-mssqldb keeps only its text, so the application gets an error that matches
// driver.ErrBadConn and for which SafeToRetry is false, as its doc says.
func TestSafeToRetryDeadConnection(t *testing.T) {
	var mu sync.Mutex
	idle := 0
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup, Faults: tdstest.Faults{Hook: func(conn int, p tdstest.Phase) tdstest.Action {
		mu.Lock()
		defer mu.Unlock()
		if conn != 1 || p != tdstest.PhaseIdle {
			return tdstest.ActionNone
		}
		if idle++; idle == 2 { // after the response to the first query
			return tdstest.ActionClose
		}
		return tdstest.ActionNone
	}}})
	c, err := NewConnector(srv.DSN("encrypt=disable"))
	if err != nil {
		t.Fatal(err)
	}
	w := &writeErrs{dialer: c.Dialer.(*dialer)}
	c.Dialer = w
	conn, err := openDB(t, c).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(idleCheckAfter + 100*time.Millisecond)
	_, appErr := conn.ExecContext(ctx, "SELECT 1")
	t.Logf("application: %v", appErr)
	if !errors.Is(appErr, driver.ErrBadConn) || SafeToRetry(appErr) {
		t.Errorf("application: ErrBadConn %v, SafeToRetry %v; want true, false", errors.Is(appErr, driver.ErrBadConn), SafeToRetry(appErr))
	}
	connErr := w.first()
	t.Logf("conn: %v", connErr)
	var de *DeadConnectionError
	if !errors.As(connErr, &de) || !SafeToRetry(connErr) {
		t.Errorf("conn: %v (%T), SafeToRetry %v; want a *DeadConnectionError, safe to retry", connErr, connErr, SafeToRetry(connErr))
	}
}

// writeErrs is the connector's dialer, keeping the errors its conns' Writes return, as the
// conn returns them (go-mssqldb then keeps only their text).
type writeErrs struct {
	*dialer
	mu   sync.Mutex
	errs []error
}

func (w *writeErrs) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := w.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &errConn{Conn: c, w: w}, nil
}

// first returns the first Write error, or nil.
func (w *writeErrs) first() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) == 0 {
		return nil
	}
	return w.errs[0]
}

type errConn struct {
	net.Conn
	w *writeErrs
}

func (c *errConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.w.mu.Lock()
		c.w.errs = append(c.w.errs, err)
		c.w.mu.Unlock()
	}
	return n, err
}
