package mssqlbridge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// serverKinds are the tdstest server settings of the matrix.
var serverKinds = []struct {
	name string
	cfg  tdstest.Config
}{
	{"OFF", tdstest.Config{Encryption: tdstest.EncryptOff}},
	{"ON", tdstest.Config{Encryption: tdstest.EncryptOn}},
	{"NOT_SUP", tdstest.Config{Encryption: tdstest.EncryptNotSup}},
	{"strict", tdstest.Config{Encryption: tdstest.EncryptStrict}},
}

func startServer(t testing.TB, cfg tdstest.Config) *tdstest.Server {
	t.Helper()
	cfg.Logf = t.Logf
	s, err := tdstest.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("server close: %v", err)
		}
	})
	return s
}

// openDB returns a *sql.DB over connector c that keeps no idle connection beyond the test.
func openDB(t testing.TB, c driver.Connector) *sql.DB {
	t.Helper()
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func bridgedDB(t testing.TB, dsn string, opts ...Option) (*sql.DB, error) {
	t.Helper()
	c, err := NewConnector(dsn, opts...)
	if err != nil {
		return nil, err
	}
	return openDB(t, c), nil
}

func nativeDB(t testing.TB, dsn string) (*sql.DB, error) {
	t.Helper()
	c, err := mssql.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return openDB(t, c), nil
}

// dbArms are the two ways a test opens a *sql.DB on a DSN: through the bridge and through
// go-mssqldb's own transport, named "bridged" and "native".
var dbArms = []struct {
	name string
	open func(testing.TB, string) (*sql.DB, error)
}{
	{"bridged", func(t testing.TB, dsn string) (*sql.DB, error) { return bridgedDB(t, dsn) }},
	{"native", nativeDB},
}

// selectBoth runs SELECT 1 on dsn through the bridge (with opts) and through go-mssqldb's own
// TLS, and returns the two outcomes; a DSN neither connector accepts fails the test.
func selectBoth(t testing.TB, dsn string, opts ...Option) (bridged, native error) {
	t.Helper()
	bdb, err := bridgedDB(t, dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ndb, err := nativeDB(t, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return selectOne(bdb), selectOne(ndb)
}

// selectOne runs SELECT 1 with a bounded context.
func selectOne(db *sql.DB) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("SELECT 1 returned %d", n)
	}
	return nil
}

// TestSQLMatrix runs SELECT 1 through database/sql for every client setting x server setting
// cell, bridged and with go-mssqldb's own TLS, and checks the bridged outcome against the
// negotiation table (docs/protocol.md, section "PRELOGIN") and the native one against the bridged one.
func TestSQLMatrix(t *testing.T) {
	type cell struct {
		ok      bool  // the connection works
		wantErr error // bridged error sentinel when not ok (nil: any error)
	}
	want := map[string]map[string]cell{
		"disable": {"OFF": {ok: true}, "ON": {wantErr: ErrServerRequiresEncryption}, "NOT_SUP": {ok: true}, "strict": {}},
		"false":   {"OFF": {ok: true}, "ON": {ok: true}, "NOT_SUP": {ok: true}, "strict": {}},
		"true":    {"OFF": {ok: true}, "ON": {ok: true}, "NOT_SUP": {wantErr: ErrServerNoEncryption}, "strict": {}},
		"strict":  {"OFF": {ok: true}, "ON": {ok: true}, "NOT_SUP": {}, "strict": {ok: true}},
	}
	for _, sk := range serverKinds {
		srv := startServer(t, sk.cfg)
		for _, client := range []string{"disable", "false", "true", "strict"} {
			t.Run(client+"/"+sk.name, func(t *testing.T) {
				w := want[client][sk.name]
				dsn := srv.DSN("encrypt="+client, "certificate="+srv.CAFile(), "dial timeout=5")
				berr, nerr := selectBoth(t, dsn)
				switch {
				case w.ok && berr != nil:
					t.Fatalf("bridged: %v, want success", berr)
				case !w.ok && berr == nil:
					t.Fatalf("bridged: success, want an error")
				case !w.ok && w.wantErr != nil && !errors.Is(berr, w.wantErr):
					t.Fatalf("bridged: %v, want %v", berr, w.wantErr)
				}
				if (nerr == nil) != (berr == nil) {
					t.Errorf("bridged and go-mssqldb's own TLS disagree: bridged %v, native %v", berr, nerr)
				}
				t.Logf("bridged: %v; native: %v", errString(berr), errString(nerr))
			})
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestLargeValues reads 1 MB nvarchar(max) and varbinary(max) values through database/sql at
// packet sizes 4096 and 16383, in full encryption, login-only and plaintext, and checks them
// byte for byte.
func TestLargeValues(t *testing.T) {
	const n = 1 << 20
	for _, mode := range tdstest.Modes() {
		srv := startServer(t, mode.Config)
		for _, ps := range []int{4096, 16383} {
			t.Run(fmt.Sprintf("%s/%d", mode.Name, ps), func(t *testing.T) {
				// connection timeout: go-mssqldb sets a deadline before every Read and Write.
				db, err := bridgedDB(t, srv.DSN("encrypt="+mode.Encrypt, "certificate="+srv.CAFile(), fmt.Sprintf("packet size=%d", ps), "connection timeout=30"))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var s string
				if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT REPLICATE(CAST(N'ab' AS nvarchar(max)), %d)", n/2)).Scan(&s); err != nil {
					t.Fatalf("nvarchar(max): %v", err)
				}
				if len(s) != n || s != strings.Repeat("ab", n/2) {
					t.Fatalf("nvarchar(max): got %d characters, want %d of \"ab\"", len(s), n)
				}
				var b []byte
				if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT CAST(REPLICATE(CAST('xyz!' AS varchar(max)), %d) AS varbinary(max))", n/4)).Scan(&b); err != nil {
					t.Fatalf("varbinary(max): %v", err)
				}
				if string(b) != strings.Repeat("xyz!", n/4) {
					t.Fatalf("varbinary(max): got %d bytes, want %d of \"xyz!\"", len(b), n)
				}
			})
		}
	}
}

// TestCancelMidQuery cancels a query after the first packet of its 8 MB result has been sent:
// the driver writes ATTENTION while its Read is in progress, gets the acknowledgement, returns
// the context's error, and the connection serves the next query.
func TestCancelMidQuery(t *testing.T) {
	for _, mode := range tdstest.Modes() {
		if mode.Name != "full" && mode.Name != "none" {
			continue
		}
		t.Run(mode.Name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := mode.Config
			cfg.Faults.Hook = func(conn int, phase tdstest.Phase) tdstest.Action {
				if phase == tdstest.PhaseResult {
					cancel()
				}
				return tdstest.ActionNone
			}
			srv := startServer(t, cfg)
			db, err := bridgedDB(t, srv.DSN("encrypt="+mode.Encrypt, "certificate="+srv.CAFile()))
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			if err := selectOne(db); err != nil {
				t.Fatal(err)
			}
			var b []byte
			err = db.QueryRowContext(ctx, "SELECT CAST(REPLICATE(CAST('abcdefgh' AS varchar(max)), 1048576) AS varbinary(max))").Scan(&b)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled query: got %v (%d bytes), want context.Canceled", err, len(b))
			}
			if err := selectOne(db); err != nil {
				t.Fatalf("query after the cancellation: %v", err)
			}
		})
	}
}

// errHandshake marks the TestServerFaults cases that expect a TLS handshake error.
var errHandshake = errors.New("TLS handshake error")

// TestServerFaults: a server that misbehaves during PRELOGIN or the handshake gets a clear
// error, not a hang.
func TestServerFaults(t *testing.T) {
	cases := []struct {
		name    string
		faults  tdstest.Faults
		encrypt string
		wantErr error
	}{
		{"reply of the wrong packet type", tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionWrongType}, "true", ErrMalformedReply},
		{"reply with a bad length", tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionBadLength}, "true", ErrMalformedReply},
		{"downgrade to NOT_SUP", tdstest.Faults{ReplyNotSup: true}, "true", ErrServerNoEncryption},
		{"no reply: the context ends the exchange", tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionStall}, "true", context.DeadlineExceeded},
		{"no reply, plaintext", tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionStall}, "disable", context.DeadlineExceeded},
		{"handshake packet of the wrong type", tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionWrongType}, "true", errHandshake},
		{"connection closed in the handshake", tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionClose}, "true", errHandshake},
		{"no handshake reply", tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionStall}, "true", context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tdstest.Config{Faults: tc.faults})
			c, err := NewConnector(srv.DSN("encrypt="+tc.encrypt, "certificate="+srv.CAFile()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			conn, err := c.Connect(ctx)
			if err == nil {
				_ = conn.Close()
				t.Fatal("connection succeeded")
			}
			if tc.wantErr == errHandshake {
				var ce *ConnectError
				if !errors.As(err, &ce) || ce.Phase != PhaseHandshake || !strings.Contains(err.Error(), "mssqlbridge: connect 127.0.0.1:") {
					t.Fatalf("got %v, want a TLS handshake error naming the host", err)
				}
			} else if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			t.Log(err)
		})
	}
}

// TestDriverRegistered: the driver is registered as DriverName; Open and OpenConnector work
// with a DSN and report DSN errors.
func TestDriverRegistered(t *testing.T) {
	if !slices.Contains(sql.Drivers(), DriverName) {
		t.Fatalf("%q not among the registered drivers %v", DriverName, sql.Drivers())
	}
	srv := startServer(t, tdstest.Config{})
	dsn := srv.DSN("encrypt=true", "certificate="+srv.CAFile())
	conn, err := sqlDriver{}.Open(dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := (sqlDriver{}).Open("sqlserver://x?encrypt=bogus"); err == nil {
		t.Fatal("Open accepted a bad DSN")
	}
	db, err := sql.Open(DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// TestConnectionTimeout: with "connection timeout", go-mssqldb sets a deadline before every
// Read and Write; the conn stores it and applies it when a Read reaches the socket, so a
// server that stops answering a query fails it with a timeout.
func TestConnectionTimeout(t *testing.T) {
	for _, encrypt := range []string{"true", "disable"} {
		t.Run(encrypt, func(t *testing.T) {
			cfg := tdstest.Config{Faults: tdstest.Faults{At: tdstest.PhaseQuery, Action: tdstest.ActionStall, Times: 1}}
			if encrypt == "disable" {
				cfg.Encryption = tdstest.EncryptNotSup
			}
			srv := startServer(t, cfg)
			db, err := bridgedDB(t, srv.DSN("encrypt="+encrypt, "certificate="+srv.CAFile(), "connection timeout=1"))
			if err != nil {
				t.Fatal(err)
			}
			err = selectOne(db) // 10 s context: the 1 s connection timeout must fire first
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("query against a stalled server: %v, want a timeout", err)
			}
		})
	}
}
