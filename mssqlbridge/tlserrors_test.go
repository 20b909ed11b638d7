package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// rsaOnly is a server that speaks only RSA key exchange, as older SQL Server versions do.
var rsaOnly = tdstest.Config{Cert: tdstest.CertRSA2048, CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256}}

// TestTLSDiagnoses drives go-mssqldb through database/sql and the bridge against a tdstest
// server set up for each TLS failure, and checks the diagnosis: its type (errors.As), the
// facts and the remedy in its text, errors.Is(err, ErrCertificate) for certificate failures,
// and the crypto/tls or crypto/x509 cause reachable with errors.As. Then the remedy the
// diagnosis names connects (RSA key exchange: WithRSAKeyExchange and the DSN parameter,
// without GODEBUG).
func TestTLSDiagnoses(t *testing.T) {
	tls10 := tdstest.Config{MinTLSVersion: tls.VersionTLS10, MaxTLSVersion: tls.VersionTLS10}
	cases := []struct {
		name   string
		cfg    tdstest.Config
		routed bool // a front server routes the login to the server of cfg, as "localhost"
		check  func(*testing.T, error) []string
		fix    []string // DSN parameters that make it connect
		opts   []Option // options that make it connect
	}{
		{"TLS 1.0 only", tls10, false, func(t *testing.T, err error) []string {
			e := as[*TLSVersionError](t, err)
			if e.MinVersion != tls.VersionTLS12 || e.ServerVersion != 0 || !isRemoteAlert(err, alertProtocolVersion) {
				t.Errorf("facts: %+v", e)
			}
			return []string{"TLS 1.2 only", "tlsmin=1.0", "MinVersion", "RFC 8996", "protocol version not supported"}
		}, []string{"tlsmin=1.0"}, nil},
		{"RSA key exchange only", rsaOnly, false, func(t *testing.T, err error) []string {
			e := as[*CipherSuiteError](t, err)
			if e.RSAKeyExchange {
				t.Errorf("facts: %+v", e)
			}
			return []string{"handshake_failure", "no cipher suite", "RSA key exchange", "WithRSAKeyExchange()", "rsakeyexchange=true", "forward secrecy"}
		}, nil, []Option{WithRSAKeyExchange()}},
		{"RSA key exchange only, DSN parameter", rsaOnly, false, nil, []string{"rsakeyexchange=true"}, nil},
		{"wrong name", tdstest.Config{Cert: tdstest.CertWrongName}, false, func(t *testing.T, err error) []string {
			e := as[*HostnameMismatchError](t, err)
			var he x509.HostnameError
			if e.Host != "127.0.0.1" || e.Redirected || !errors.As(err, &he) {
				t.Errorf("facts: %+v", e)
			}
			return []string{tdstest.WrongCertificateName, `not "127.0.0.1" (the host dialed)`, "hostNameInCertificate"}
		}, []string{"hostNameInCertificate=" + tdstest.WrongCertificateName}, nil},
		{"wrong name after a routing redirect", tdstest.Config{Cert: tdstest.CertWrongName}, true, func(t *testing.T, err error) []string {
			e := as[*HostnameMismatchError](t, err)
			if e.Host != "localhost" || !e.Redirected || e.DSNHost != "127.0.0.1" {
				t.Errorf("facts: %+v", e)
			}
			return []string{tdstest.WrongCertificateName, `not "localhost"`, "redirected", "the DSN names 127.0.0.1"}
		}, nil, nil},
		{"unknown CA", tdstest.Config{Cert: tdstest.CertUnknownCA}, false, func(t *testing.T, err error) []string {
			e := as[*UnknownAuthorityError](t, err)
			var ua x509.UnknownAuthorityError
			if e.SelfSigned || !errors.As(err, &ua) {
				t.Errorf("facts: %+v", e)
			}
			return []string{"CN=localhost,O=tdstest", "CN=tdstest unpublished CA,O=tdstest", "certificate=", "TrustServerCertificate=true"}
		}, []string{"TrustServerCertificate=true"}, nil},
		{"expired", tdstest.Config{Cert: tdstest.CertExpired}, false, func(t *testing.T, err error) []string {
			e := as[*CertificateValidityError](t, err)
			var ci x509.CertificateInvalidError
			if e.NotYetValid() || !e.Now.After(e.NotAfter) || !errors.As(err, &ci) {
				t.Errorf("facts: %+v", e)
			}
			return []string{"expired", "valid from", e.NotAfter.UTC().Format("2006-01-02 15:04"), "renew"}
		}, nil, nil},
		{"not yet valid", tdstest.Config{Cert: tdstest.CertNotYetValid}, false, func(t *testing.T, err error) []string {
			e := as[*CertificateValidityError](t, err)
			if !e.NotYetValid() || !e.Now.Before(e.NotBefore) {
				t.Errorf("facts: %+v", e)
			}
			return []string{"is not valid yet", e.NotBefore.UTC().Format("2006-01-02 15:04"), "clock"}
		}, nil, nil},
		{"negative serial number", tdstest.Config{Cert: tdstest.CertNegativeSerial}, false, func(t *testing.T, err error) []string {
			e := as[*CertificateParseError](t, err)
			if !e.NegativeSerial || e.Detail != "x509: negative serial number" {
				t.Errorf("facts: %+v", e)
			}
			return []string{"cannot parse", "negative serial", "GODEBUG=x509negativeserial=1"}
		}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tc.cfg)
			target := srv
			if tc.routed {
				_, port, _ := net.SplitHostPort(srv.Addr)
				target = startServer(t, tdstest.Config{RouteTo: net.JoinHostPort("localhost", port)})
			}
			trust := "certificate=" + filepath.Join(t.TempDir(), "cas.pem")
			if tc.cfg.Cert == tdstest.CertNegativeSerial {
				// The certificate file could not hold it (the loader would fail to parse it),
				// and skipping verification does not help: the certificate is parsed first.
				trust = "TrustServerCertificate=true"
			} else {
				writeCAs(t, strings.TrimPrefix(trust, "certificate="), target, srv)
			}
			dsn := func(extra ...string) string {
				return target.DSN(append([]string{"encrypt=true", trust}, extra...)...)
			}
			if tc.check != nil {
				err := bridgedSelect(t, dsn())
				if err == nil {
					t.Fatal("connected, want a TLS failure")
				}
				t.Logf("bridged: %v", err)
				ndb, nerr := nativeDB(t, dsn())
				if nerr == nil {
					nerr = selectOne(ndb)
				}
				t.Logf("go-mssqldb's own TLS: %v", errString(nerr))
				for _, want := range tc.check(t, err) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not say %q", want)
					}
				}
				var ce *CertificateError
				if isCert := errors.As(err, &ce); isCert != errors.Is(err, ErrCertificate) {
					t.Errorf("*CertificateError %v, ErrCertificate %v", isCert, !isCert)
				} else if isCert && ce.Host == "" {
					t.Errorf("*CertificateError without a host")
				}
			}
			if tc.fix != nil || tc.opts != nil {
				if err := bridgedSelect(t, dsn(tc.fix...), tc.opts...); err != nil {
					t.Fatalf("with %q %d options: %v", tc.fix, len(tc.opts), err)
				}
			}
		})
	}
}

// TestTLSDiagnosesCertificateKinds: the certificate diagnoses wrap a *CertificateError
// (errors.Is ErrCertificate), the version and cipher suite ones do not.
func TestTLSDiagnosesCertificateKinds(t *testing.T) {
	cerr := &CertificateError{Host: "h", Err: errors.New("x")}
	for _, err := range []error{
		&HostnameMismatchError{CertificateError: cerr},
		&UnknownAuthorityError{CertificateError: cerr},
		&CertificateValidityError{CertificateError: cerr},
		&CertificateParseError{CertificateError: cerr},
	} {
		if !errors.Is(err, ErrCertificate) {
			t.Errorf("%T is not ErrCertificate", err)
		}
	}
	for _, err := range []error{&TLSVersionError{Err: errors.New("x")}, &CipherSuiteError{Err: errors.New("x")}} {
		if errors.Is(err, ErrCertificate) {
			t.Errorf("%T is ErrCertificate", err)
		}
	}
}

// TestNegativeSerialGODEBUG: the setting the CertificateParseError names makes the connection
// work (process-wide: the test sets GODEBUG in the environment, which Go reads again).
func TestNegativeSerialGODEBUG(t *testing.T) {
	t.Setenv("GODEBUG", "x509negativeserial=1")
	srv := startServer(t, tdstest.Config{Cert: tdstest.CertNegativeSerial})
	if err := bridgedSelect(t, srv.DSN("encrypt=true", "certificate="+srv.CAFile())); err != nil {
		t.Fatalf("with GODEBUG=x509negativeserial=1: %v", err)
	}
}

// TestTLSVersionDiagnosis: a server that chooses a version below the connection's minimum
// (SChannel does, ignoring the supported_versions extension) is a *TLSVersionError naming it;
// tlsmin=1.3 inside PRELOGIN points to encrypt=strict.
func TestTLSVersionDiagnosis(t *testing.T) {
	f := handshakeFacts{dialed: "h", minVersion: tls.VersionTLS12, maxVersion: tls.VersionTLS12}
	err := diagnoseHandshake(f, errors.New("tls: server selected unsupported protocol version 301"))
	var e *TLSVersionError
	if !errors.As(err, &e) || e.ServerVersion != tls.VersionTLS10 || !strings.Contains(err.Error(), "the server chose TLS 1.0") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	srv := startServer(t, tdstest.Config{})
	err = bridgedSelect(t, srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "tlsmin=1.3"))
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "encrypt=strict") {
		t.Fatalf("tlsmin=1.3: %v", err)
	}
	t.Log(err)
}

// TestRSAKeyExchangeDSNParameter: rsakeyexchange takes a boolean; the option lists Go's
// default secure suites plus the RSA key exchange ones, and keeps a caller's list.
func TestRSAKeyExchangeDSNParameter(t *testing.T) {
	if _, err := NewConnector("sqlserver://127.0.0.1?encrypt=true&rsakeyexchange=maybe"); err == nil || !strings.Contains(err.Error(), rsaKeyExchangeParam) {
		t.Fatalf("bad value: %v", err)
	}
	suites := withRSAKeyExchange(nil)
	for _, id := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA} {
		if !containsSuite(suites, id) {
			t.Errorf("%s missing from %v", tls.CipherSuiteName(id), suites)
		}
	}
	if containsSuite(suites, tls.TLS_AES_128_GCM_SHA256) || containsSuite(suites, tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA) {
		t.Errorf("TLS 1.3 or 3DES suite listed: %v", suites)
	}
	own := withRSAKeyExchange([]uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256})
	if len(own) != 1+len(rsaKeyExchangeSuites) || own[0] != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("caller's list: %v", own)
	}
}

func containsSuite(suites []uint16, id uint16) bool {
	for _, s := range suites {
		if s == id {
			return true
		}
	}
	return false
}

// as returns err as a T, failing the test when it is not one.
func as[T error](t *testing.T, err error) T {
	t.Helper()
	var e T
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T) is not a %T", err, err, e)
	}
	return e
}

// bridgedSelect runs SELECT 1 on dsn through the bridge.
func bridgedSelect(t *testing.T, dsn string, opts ...Option) error {
	t.Helper()
	db, err := bridgedDB(t, dsn, opts...)
	if err != nil {
		return err
	}
	return selectOne(db)
}
