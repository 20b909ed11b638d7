package mssqlbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// logBuffer is an slog JSON handler's output, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// events returns the logged records, decoded.
func (b *logBuffer) events(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func newLogBuffer() (*logBuffer, *slog.Logger) {
	b := &logBuffer{}
	return b, slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestLoggerPhases: with WithLogger, a full login logs one event per phase with the
// negotiated mode and TLS parameters, and neither the password nor the token ever appears
// in the log.
func TestLoggerPhases(t *testing.T) {
	const (
		password = "Log-Secret-Passw0rd-7f3a"
		token    = "eyJ0eXAiOiJKV1QifQ.log-secret-token-9c1e"
	)
	tests := []struct {
		name     string
		server   tdstest.Config
		encrypt  string
		useToken bool
		mode     string
		tls      bool
	}{
		{"full", tdstest.Config{}, "true", false, "full", true},
		{"login-only", tdstest.Config{Encryption: tdstest.EncryptOff}, "false", false, "login-only", true},
		{"none", tdstest.Config{Encryption: tdstest.EncryptNotSup}, "disable", false, "none", false},
		{"strict", tdstest.Config{Encryption: tdstest.EncryptStrict}, "strict", false, "strict", true},
		{"token, full", tdstest.Config{}, "true", true, "full", true},
		{"token, strict", tdstest.Config{Encryption: tdstest.EncryptStrict}, "strict", true, "strict", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.server
			cfg.Password, cfg.FedAuthToken = password, token
			srv := startServer(t, cfg)
			buf, logger := newLogBuffer()
			dsn := srv.DSN("encrypt="+tc.encrypt, "certificate="+srv.CAFile())
			var err error
			if tc.useToken {
				d, derr := NewDialer(dsn, WithLogger(logger))
				if derr != nil {
					t.Fatal(derr)
				}
				dcfg := d.DriverConfig()
				dcfg.User, dcfg.Password = "", ""
				c, cerr := mssql.NewSecurityTokenConnector(dcfg, func(context.Context) (string, error) { return token, nil })
				if cerr != nil {
					t.Fatal(cerr)
				}
				c.Dialer = d
				err = selectOne(openDB(t, c))
			} else {
				c, cerr := NewConnector(dsn, WithLogger(logger))
				if cerr != nil {
					t.Fatal(cerr)
				}
				err = selectOne(openDB(t, c))
			}
			if err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			t.Log(out)
			for _, secret := range []string{password, token} {
				if strings.Contains(out, secret) {
					t.Fatalf("the log contains the secret %q", secret)
				}
			}
			seen := map[string]map[string]any{}
			for _, e := range buf.events(t) {
				seen[e["msg"].(string)] = e
				if e["host"] != srv.Addr {
					t.Errorf("event %v: host %v, want %s", e["msg"], e["host"], srv.Addr)
				}
			}
			want := []string{"mssqlbridge: TCP connect", "mssqlbridge: PRELOGIN", "mssqlbridge: LOGIN7 send"}
			if tc.tls {
				want = append(want, "mssqlbridge: TLS handshake")
			}
			for _, msg := range want {
				if seen[msg] == nil {
					t.Errorf("no %q event", msg)
				}
			}
			if p := seen["mssqlbridge: PRELOGIN"]; p != nil && p["mode"] != tc.mode {
				t.Errorf("PRELOGIN event mode %v, want %s", p["mode"], tc.mode)
			}
			if h := seen["mssqlbridge: TLS handshake"]; h != nil && (!strings.HasPrefix(h["tls_version"].(string), "TLS 1.") || h["cipher_suite"] == "") {
				t.Errorf("TLS handshake event %v: want a TLS version and a cipher suite", h)
			}
		})
	}
}

// TestLoggerConnectFailed: a failed attempt logs "connect failed" with the phase and the
// error's text.
func TestLoggerConnectFailed(t *testing.T) {
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup})
	buf, logger := newLogBuffer()
	db, err := bridgedDB(t, srv.DSN("encrypt=true"), WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	err = selectOne(db)
	if !errors.Is(err, ErrServerNoEncryption) {
		t.Fatalf("got %v, want ErrServerNoEncryption", err)
	}
	var failed map[string]any
	for _, e := range buf.events(t) {
		if e["msg"] == "mssqlbridge: connect failed" {
			failed = e
		}
	}
	if failed == nil || failed["phase"] != "prelogin" || failed["level"] != "WARN" || !strings.Contains(failed["error"].(string), "does not support encryption") {
		t.Fatalf("connect failed event %v; log:\n%s", failed, buf)
	}
}

// TestLoggerRedirect: a routing redirect shows as an event naming the routed host, and the
// routed host's phases follow.
func TestLoggerRedirect(t *testing.T) {
	target := startServer(t, tdstest.Config{})
	_, port, _ := net.SplitHostPort(target.Addr)
	routed := net.JoinHostPort("localhost", port)
	front := startServer(t, tdstest.Config{RouteTo: routed})
	buf, logger := newLogBuffer()
	db, err := bridgedDB(t, front.DSN("encrypt=true", "TrustServerCertificate=true"), WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	if err := selectOne(db); err != nil {
		t.Fatal(err)
	}
	var redirect, routedTLS bool
	for _, e := range buf.events(t) {
		switch {
		case e["msg"] == "mssqlbridge: routing redirect followed" && e["host"] == routed && e["dsn_host"] == "127.0.0.1":
			redirect = true
		case e["msg"] == "mssqlbridge: TLS handshake" && e["host"] == routed:
			routedTLS = true
		}
	}
	if !redirect || !routedTLS {
		t.Fatalf("redirect event %v, routed handshake event %v; log:\n%s", redirect, routedTLS, buf)
	}
}

// TestLogDeadConn: the hook for dead connections logs with a logger and does nothing
// without one.
func TestLogDeadConn(t *testing.T) {
	buf, logger := newLogBuffer()
	(&settings{}).logDeadConn("h:1", "10.0.0.1:1", time.Minute, errors.New("EOF")) // no logger: no panic
	(&settings{logger: logger}).logDeadConn("h:1", "10.0.0.1:1", time.Minute, errors.New("EOF"))
	ev := buf.events(t)
	if len(ev) != 1 || ev[0]["msg"] != "mssqlbridge: dead connection" || ev[0]["host"] != "h:1" || ev[0]["error"] != "EOF" {
		t.Fatalf("events %v", ev)
	}
}

// TestNoLoggerAllocs: without a logger, a phase costs no allocation.
func TestNoLoggerAllocs(t *testing.T) {
	tr := &connTrace{s: &settings{}, timings: make([]PhaseTiming, 0, 1000)}
	if n := testing.AllocsPerRun(100, func() {
		tr.start(PhaseTCP)
		tr.done()
	}); n != 0 {
		t.Fatalf("%v allocations per phase without a logger", n)
	}
}
