package mssqlbridge

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestSeveralAddresses: a name that resolves to a dead and a live loopback address connects,
// whichever comes first, with MultiSubnetFailover on (every address at once, go-mssqldb's
// default) and off (one after another in the resolver's order); the name, not the address,
// is what the certificate is checked against. When every address is dead, the error names
// each attempt, in order for the sequential case.
func TestSeveralAddresses(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	_, port, _ := net.SplitHostPort(srv.Addr)
	live := net.IPAddr{IP: net.ParseIP("127.0.0.1")}
	dead := net.IPAddr{IP: net.ParseIP("127.0.0.3")} // nothing listens there: refused
	dead2 := net.IPAddr{IP: net.ParseIP("127.0.0.4")}
	tests := []struct {
		name  string
		multi string
		ips   []net.IPAddr
		ok    bool
	}{
		{"parallel/dead first", "true", []net.IPAddr{dead, live}, true},
		{"parallel/live first", "true", []net.IPAddr{live, dead}, true},
		{"sequential/dead first", "false", []net.IPAddr{dead, live}, true},
		{"sequential/live first", "false", []net.IPAddr{live, dead}, true},
		{"parallel/all dead", "true", []net.IPAddr{dead, dead2}, false},
		{"sequential/all dead", "false", []net.IPAddr{dead, dead2}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn := "sqlserver://" + tdstest.DefaultUser + ":" + tdstest.DefaultPassword + "@db.test:" + port +
				"?encrypt=true&certificate=" + srv.CAFile() + "&hostNameInCertificate=localhost" +
				"&multiSubnetFailover=" + tc.multi + "&connection+timeout=30"
			c, err := NewConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			var lookups atomic.Int32
			c.Dialer.(*dialer).s.lookup = func(_ context.Context, host string) ([]net.IPAddr, error) {
				lookups.Add(1)
				if host != "db.test" {
					t.Errorf("lookup of %q, want db.test", host)
				}
				return tc.ips, nil
			}
			err = selectOne(openDB(t, c))
			if lookups.Load() == 0 {
				t.Fatal("the name was not resolved through the lookup")
			}
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("connected with every address dead")
			}
			msg := err.Error()
			a, b := strings.Index(msg, "127.0.0.3:"+port), strings.Index(msg, "127.0.0.4:"+port)
			if a < 0 || b < 0 {
				t.Fatalf("error %q does not name both attempts", msg)
			}
			if tc.multi == "false" && a > b {
				t.Fatalf("error %q: attempts out of the resolver's order", msg)
			}
		})
	}
}
