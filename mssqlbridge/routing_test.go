package mssqlbridge

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// addrDialer dials TCP and records the addresses it was asked to dial.
type addrDialer struct {
	d     net.Dialer
	mu    sync.Mutex
	addrs []string
}

func (a *addrDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	a.mu.Lock()
	a.addrs = append(a.addrs, addr)
	a.mu.Unlock()
	return a.d.DialContext(ctx, network, addr)
}

func (a *addrDialer) dialed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.addrs...)
}

// TestRouting: a front server routes the login (ENVCHANGE type 20) to a second server; the
// bridged connector dials the routed host through the same dialer and checks the second
// server's certificate against the routed host's name (unless hostNameInCertificate is set),
// with the same outcome as go-mssqldb's own TLS for every certificate setting. tdstest's
// certificates name localhost, 127.0.0.1 and ::1, so a route to "localhost" verifies and a
// route to 127.0.0.2 does not.
func TestRouting(t *testing.T) {
	for _, strict := range []bool{false, true} {
		mode := map[bool]string{false: "full", true: "strict"}[strict]
		encrypt := map[bool]string{false: "true", true: "strict"}[strict]
		setting := map[bool]tdstest.Encryption{false: tdstest.EncryptOn, true: tdstest.EncryptStrict}[strict]
		named := startServer(t, tdstest.Config{Encryption: setting})
		unnamed := startServer(t, tdstest.Config{Encryption: setting, Addr: "127.0.0.2:0"})
		routes := []struct {
			name, host string
			target     *tdstest.Server
		}{
			{"to localhost", "localhost", named},
			{"to 127.0.0.2", "127.0.0.2", unnamed},
		}
		for _, rt := range routes {
			_, port, _ := net.SplitHostPort(rt.target.Addr)
			routed := net.JoinHostPort(rt.host, port)
			front := startServer(t, tdstest.Config{Encryption: setting, RouteTo: routed})
			cas := filepath.Join(t.TempDir(), "cas.pem")
			writeCAs(t, cas, front, rt.target)
			frontHost, _, _ := net.SplitHostPort(front.Addr)
			tests := []struct {
				name     string
				params   []string
				ok       bool
				failHost string // the host named by the certificate error; the front's: not routed
			}{
				{"certificate", []string{"certificate=" + cas}, rt.host == "localhost", rt.host},
				{"hostNameInCertificate", []string{"certificate=" + cas, "hostNameInCertificate=localhost"}, true, ""},
				// Strict mode ignores TrustServerCertificate (as go-mssqldb does): the system
				// roots do not know tdstest's certificate, so the front server already fails.
				{"TrustServerCertificate", []string{"TrustServerCertificate=true"}, !strict, frontHost},
				{"serverCertificate", []string{"serverCertificate=" + front.CAFile()}, false, rt.host},
			}
			for _, tc := range tests {
				t.Run(mode+"/"+rt.name+"/"+tc.name, func(t *testing.T) {
					dsn := front.DSN(append([]string{"encrypt=" + encrypt, "connection+timeout=30"}, tc.params...)...)
					rec := &addrDialer{}
					berr, nerr := selectBoth(t, dsn, WithDialer(rec))
					if (berr == nil) != tc.ok || (nerr == nil) != tc.ok {
						t.Fatalf("bridged: %v; native: %v; want success %v for both", berr, nerr, tc.ok)
					}
					dialed := rec.dialed()
					switch {
					case len(dialed) == 0 || dialed[0] != front.Addr:
						t.Fatalf("dialed %q, want %s first", dialed, front.Addr)
					case tc.failHost != frontHost && (len(dialed) < 2 || dialed[1] != routed):
						t.Fatalf("dialed %q, want %s then %s", dialed, front.Addr, routed)
					}
					if tc.ok {
						return
					}
					var cerr *CertificateError
					if !errors.As(berr, &cerr) || cerr.Host != tc.failHost {
						t.Fatalf("bridged error %v, want a *CertificateError for host %q", berr, tc.failHost)
					}
				})
			}
		}
	}
}

// writeCAs writes the servers' self-signed certificates into one PEM file, so that one
// certificate= parameter trusts both the front and the routed server.
func writeCAs(t *testing.T, path string, servers ...*tdstest.Server) {
	t.Helper()
	var all []byte
	for _, s := range servers {
		b, err := os.ReadFile(s.CAFile())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(path, all, 0o600); err != nil {
		t.Fatal(err)
	}
}
