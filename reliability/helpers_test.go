package reliability

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/testcert"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// hangBound is the generous upper bound on any call a fault should end: exceeding it means a
// hang, not slowness.
const hangBound = 20 * time.Second

var (
	certOnce sync.Once
	testCert tls.Certificate
	testPool *x509.CertPool
	certErr  error
)

// serverCert returns a self-signed ECDSA certificate for "localhost" and 127.0.0.1 and a pool
// that trusts it, made once per test binary.
func serverCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	certOnce.Do(func() {
		testCert, testPool, certErr = testcert.SelfSigned(testcert.LeafOptions{DNSNames: []string{"localhost"},
			IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	})
	if certErr != nil {
		t.Fatalf("test certificate: %v", certErr)
	}
	return testCert, testPool
}

// clientTLS returns a client config that trusts serverCert.
func clientTLS(t testing.TB) *tls.Config {
	_, pool := serverCert(t)
	return &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

// serverTLS returns a server config with serverCert, TLS 1.2 at most (as inside PRELOGIN).
func serverTLS(t testing.TB) *tls.Config {
	cert, _ := serverCert(t)
	return bridge.TLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, false)
}

// bridgeServer returns a ScriptServer whose connections run a TLS handshake inside PRELOGIN
// packets (tls.Server over a server bridge), switch to passthrough and then run serve. The
// server writes one record per Write (DynamicRecordSizingDisabled).
func bridgeServer(t testing.TB, serve func(tc *tls.Conn, b *bridge.Conn)) *wiretest.ScriptServer {
	t.Helper()
	cfg := serverTLS(t)
	s, err := wiretest.NewScriptServer(func(c net.Conn) {
		b := bridge.New(c, bridge.Options{Role: bridge.RoleServer})
		defer b.Close()
		tc := tls.Server(b, cfg)
		_ = tc.SetDeadline(time.Now().Add(hangBound))
		if err := tc.Handshake(); err != nil {
			return
		}
		if err := b.StartPassthrough(); err != nil {
			return
		}
		_ = tc.SetDeadline(time.Time{})
		serve(tc, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// scriptServer starts a ScriptServer closed at the end of the test.
func scriptServer(t testing.TB, script func(c net.Conn)) *wiretest.ScriptServer {
	t.Helper()
	s, err := wiretest.NewScriptServer(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// proxy starts a Proxy to target, closed at the end of the test.
func proxy(t testing.TB, target string, tamper wiretest.Tamper) *wiretest.Proxy {
	t.Helper()
	p, err := wiretest.NewProxy(target, tamper)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// bridgeClient is the client side at the bridge level: a socket (counted), the bridge over it,
// tls.Client over the bridge and the coalescing Reader.
type bridgeClient struct {
	raw *wiretest.CountingConn
	b   *bridge.Conn
	tc  *tls.Conn
	r   *bridge.Reader
}

// dialBridge dials addr and runs the TLS handshake inside PRELOGIN packets (no PRELOGIN
// exchange before it: the peers are this package's servers), then switches to passthrough.
// On error the connection is closed and the error returned.
func dialBridge(ctx context.Context, addr string, cfg *tls.Config, opts bridge.Options) (*bridgeClient, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cc := wiretest.NewCountingConn(raw)
	b := bridge.New(cc, opts)
	tc := tls.Client(b, bridge.TLSConfig(cfg, false))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	if err := b.StartPassthrough(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return &bridgeClient{raw: cc, b: b, tc: tc, r: bridge.NewReader(tc, b, 64<<10)}, nil
}

// startTDS starts a tdstest server for cfg (logging to t), closed at the end of the test.
func startTDS(t testing.TB, cfg tdstest.Config) *tdstest.Server {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	s, err := tdstest.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("tdstest close: %v", err)
		}
	})
	return s
}

// openBridged opens a *sql.DB over mssqlbridge for dsn, closed at the end of the test.
func openBridged(t testing.TB, dsn string, opts ...mssqlbridge.Option) *sql.DB {
	t.Helper()
	c, err := mssqlbridge.NewConnector(dsn, opts...)
	if err != nil {
		t.Fatalf("NewConnector(%q): %v", dsn, err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// within runs f and fails the test if it has not returned after hangBound: the check for
// "no hang". It returns f's error.
func within(t testing.TB, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		t.Fatalf("%s: still running after %v (hang)", what, hangBound)
		return nil
	}
}

// checkErr fails the test unless err is non-nil, matches every target of is with errors.Is and
// contains every substring of msgs.
func checkErr(t testing.TB, err error, is []error, msgs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one matching %v and containing %q", is, msgs)
	}
	for _, target := range is {
		if !errors.Is(err, target) {
			t.Errorf("error %q (%T): errors.Is(%v) = false", err, err, target)
		}
	}
	for _, m := range msgs {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not contain %q", err, m)
		}
	}
}

// isTimeout reports whether err is a net.Error that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// pattern returns n bytes of the repeating pattern p.
func pattern(p string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = p[i%len(p)]
	}
	return b
}

// describe formats a byte count for logs.
func describe(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
