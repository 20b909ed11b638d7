package mssqlbridge

import (
	"errors"
	"net"
	"net/url"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestFailoverPartner: with the primary down, go-mssqldb connects to the DSN's failover
// partner, through the bridged dialer as well. The bridge checks the partner's certificate
// against the partner's name (the host it dialed); go-mssqldb's own TLS keeps checking it
// against the primary's name. So a partner whose certificate does not name it (here a server
// on 127.0.0.2 whose certificate names 127.0.0.1) is refused by the bridge and accepted by
// go-mssqldb, unless hostNameInCertificate fixes the name for both; a partner whose
// certificate names it is accepted by both.
func TestFailoverPartner(t *testing.T) {
	deadAddr := closedAddr(t)
	named := startServer(t, tdstest.Config{})
	unnamed := startServer(t, tdstest.Config{Addr: "127.0.0.2:0"})
	tests := []struct {
		name            string
		partner         *tdstest.Server
		partnerHost     string
		extra           []string
		bridged, native bool
	}{
		{"partner named in its certificate", named, "localhost", nil, true, true},
		{"partner not named", unnamed, "127.0.0.2", nil, false, true},
		{"hostNameInCertificate", unnamed, "127.0.0.2", []string{"hostNameInCertificate=localhost"}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(tc.partner.Addr)
			params := append([]string{"encrypt=true", "certificate=" + tc.partner.CAFile(),
				"failoverpartner=" + tc.partnerHost, "failoverport=" + port, "dial+timeout=10"}, tc.extra...)
			dsn := tc.partner.DSN(params...)
			// Point the DSN at the dead primary.
			dsn = replaceHost(t, dsn, deadAddr)
			berr, nerr := selectBoth(t, dsn)
			if (berr == nil) != tc.bridged || (nerr == nil) != tc.native {
				t.Fatalf("bridged: %v (want success %v); native: %v (want success %v)", berr, tc.bridged, nerr, tc.native)
			}
			var cerr *CertificateError
			if berr != nil && (!errors.As(berr, &cerr) || cerr.Host != tc.partnerHost) {
				t.Fatalf("bridged error %v, want a *CertificateError for %q", berr, tc.partnerHost)
			}
		})
	}
}

// replaceHost returns the URL DSN with its host:port replaced by addr.
func replaceHost(t *testing.T, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}
