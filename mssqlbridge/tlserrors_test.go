package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
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

// TestStrictWithoutTDS8: with encrypt=strict, a server that does not speak TDS 8.0 reads the
// TLS ClientHello as a TDS packet and closes (Babelfish reads an 8-byte header, then resets
// or closes). The failure says the server may not speak TDS 8.0 and to try encrypt=true; a
// server that sent bytes before closing gets no such diagnosis, whatever it sent.
func TestStrictWithoutTDS8(t *testing.T) {
	readRecord := func(c net.Conn) bool { // reads one TLS record
		h := make([]byte, 5)
		if _, err := io.ReadFull(c, h); err != nil {
			return false
		}
		_, err := io.ReadFull(c, make([]byte, int(h[3])<<8|int(h[4])))
		return err == nil
	}
	cases := map[string]struct {
		script func(c net.Conn)
		tds8   bool
	}{
		"reads a TDS header and closes":    {func(c net.Conn) { _, _ = io.ReadFull(c, make([]byte, tds.HeaderSize)) }, true},
		"reads the ClientHello and closes": {func(c net.Conn) { readRecord(c) }, true},
		"sends the start of a ServerHello and closes": {func(c net.Conn) {
			if readRecord(c) {
				// A handshake record holding only the header of an 80-byte ServerHello: crypto/tls
				// waits for the rest and meets the end of the stream at a record boundary (EOF).
				_, _ = c.Write([]byte{0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x50})
			}
		}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv, err := wiretest.NewScriptServer(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			err = bridgedSelect(t, "sqlserver://"+srv.Addr+"?encrypt=strict")
			t.Log(err)
			if reset, closed := peerClosed(err); !closed {
				t.Fatalf("want the server's close or reset, got %v", err)
			} else if e := (*TDS8UnsupportedError)(nil); errors.As(err, &e) != tc.tds8 {
				t.Fatalf("*TDS8UnsupportedError found: %v, want %v", !tc.tds8, tc.tds8)
			} else if tc.tds8 && e.Reset != reset {
				t.Errorf("Reset %v, the error says %v", e.Reset, reset)
			}
			ce := as[*ConnectError](t, err)
			if ce.Phase != PhaseHandshake {
				t.Errorf("phase %v, want %v", ce.Phase, PhaseHandshake)
			}
			for _, want := range []string{"TDS 8.0", "encrypt=true", "SQL Server before 2022"} {
				if strings.Contains(err.Error(), want) != tc.tds8 {
					t.Errorf("the error says %q: %v, want %v", want, !tc.tds8, tc.tds8)
				}
			}
		})
	}
}

// TestTLS13OnlyServer: inside PRELOGIN the bridge offers TLS 1.2 at most, so a server that
// speaks only TLS 1.3 there refuses it (tdstest with MinTLSVersion 1.3 refuses every version
// inside PRELOGIN and speaks TLS 1.3 in strict mode). The diagnosis names the bridge's cap and
// points to tlsmin=1.3 and encrypt=strict, and not to tlsmin=1.0 once that was tried; strict
// connects. With encrypt=false and tlsmin=1.3 against a server that offers login-only
// encryption, crypto/tls's bare "no supported versions" becomes a *TLSVersionError saying why.
func TestTLS13OnlyServer(t *testing.T) {
	srv := startServer(t, tdstest.Config{MinTLSVersion: tls.VersionTLS13})
	loginOnly := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff})
	cases := map[string]struct {
		srv    *tdstest.Server
		params []string
		check  func(*testing.T, *TLSVersionError)
		want   []string
		not    []string
	}{
		"encrypt=true": {srv, []string{"encrypt=true"}, func(t *testing.T, e *TLSVersionError) {
			if !e.Capped || e.LoginOnly || e.MinVersion != tls.VersionTLS12 || e.MaxVersion != tls.VersionTLS12 || e.ServerVersion != 0 {
				t.Errorf("facts: %+v", e)
			}
		}, []string{"TLS 1.2 only (the bridge caps TLS inside PRELOGIN at 1.2", "only TLS 1.3", "tlsmin=1.3 in the DSN lifts the cap", "encrypt=strict", "protocol version not supported"},
			[]string{"likely speaks only TLS 1.0"}},
		"encrypt=true, tlsmin=1.0 tried": {srv, []string{"encrypt=true", "tlsmin=1.0"}, func(t *testing.T, e *TLSVersionError) {
			if !e.Capped || e.MinVersion != tls.VersionTLS10 {
				t.Errorf("facts: %+v", e)
			}
		}, []string{"(it speaks only TLS 1.3)", "tlsmin=1.3", "encrypt=strict"}, []string{"tlsmin=1.0 in the DSN", "either"}},
		"encrypt=false, tlsmin=1.3, login-only server": {loginOnly, []string{"encrypt=false", "tlsmin=1.3"}, func(t *testing.T, e *TLSVersionError) {
			if !e.LoginOnly || e.MinVersion != tls.VersionTLS13 || e.MaxVersion != tls.VersionTLS12 {
				t.Errorf("facts: %+v", e)
			}
		}, []string{"no TLS version to offer", "login only", "TLS 1.2 at most", "encrypt=true", "encrypt=strict", "nothing was sent",
			"tls: no supported versions satisfy MinVersion and MaxVersion"}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := bridgedSelect(t, tc.srv.DSN(append([]string{"certificate=" + tc.srv.CAFile()}, tc.params...)...))
			t.Log(err)
			tc.check(t, as[*TLSVersionError](t, err))
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q", want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(err.Error(), not) {
					t.Errorf("the error says %q", not)
				}
			}
			// The remedy both name: TDS 8.0, where TLS 1.3 is offered.
			if err := bridgedSelect(t, tc.srv.DSN(append([]string{"certificate=" + tc.srv.CAFile()}, append(tc.params[1:], "encrypt=strict")...)...)); err != nil {
				t.Fatalf("encrypt=strict: %v", err)
			}
		})
	}
}

// TestTLS13InsidePrelogin: against a server that speaks TLS 1.3, and only 1.3, inside PRELOGIN
// (tdstest caps itself at 1.2 there), the other remedy the diagnosis names works: tlsmin=1.3
// lifts the bridge's cap for full encryption.
func TestTLS13InsidePrelogin(t *testing.T) {
	pki := newTestPKI(t)
	srv, err := wiretest.NewScriptServer(func(c net.Conn) {
		if _, err := wiretest.ReadClientPrelogin(c); err != nil {
			return
		}
		if _, err := c.Write(wiretest.PreloginReply(prelogin.EncryptOn)); err != nil {
			return
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{pki.leaf}, MinVersion: tls.VersionTLS13}
		b, ts := bridge.Server(c, cfg, bridge.Options{AllowTLS13: true})
		if ts.Handshake() != nil || b.StartPassthrough() != nil {
			return
		}
		_, _ = io.Copy(io.Discard, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	for name, minVersion := range map[string]uint16{"default": 0, "tlsmin=1.3": tls.VersionTLS13} {
		t.Run(name, func(t *testing.T) {
			s, err := newSettings(msdsn.Config{Encryption: msdsn.EncryptionRequired, Host: "localhost",
				TLSConfig: &tls.Config{RootCAs: pki.pool, MinVersion: minVersion}}, dsnFiles{}, options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := dialTest(t, s, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Write(clientPrelogin())
			if minVersion == 0 {
				e := as[*TLSVersionError](t, err)
				if !e.Capped || !strings.Contains(err.Error(), "tlsmin=1.3") {
					t.Fatalf("%+v: %v", e, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v := c.tlsConn.ConnectionState().Version; v != tls.VersionTLS13 {
				t.Fatalf("TLS version %x, want TLS 1.3", v)
			}
		})
	}
}

// TestCertificateVerificationErrorReachable: when crypto/tls fails the verification, its
// *tls.CertificateVerificationError, with the certificates the server sent, stays reachable
// with errors.As through the *ConnectError and the diagnosis, which errors.As still finds.
func TestCertificateVerificationErrorReachable(t *testing.T) {
	cases := map[string]struct {
		cert      tdstest.CertKind
		diagnosis func(*testing.T, error)
	}{
		"wrong name": {tdstest.CertWrongName, func(t *testing.T, err error) { as[*HostnameMismatchError](t, err) }},
		"unknown CA": {tdstest.CertUnknownCA, func(t *testing.T, err error) { as[*UnknownAuthorityError](t, err) }},
		"expired":    {tdstest.CertExpired, func(t *testing.T, err error) { as[*CertificateValidityError](t, err) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t, tdstest.Config{Cert: tc.cert})
			err := bridgedSelect(t, srv.DSN("encrypt=true", "certificate="+srv.CAFile()))
			as[*ConnectError](t, err)
			tc.diagnosis(t, err)
			if !errors.Is(err, ErrCertificate) {
				t.Errorf("not ErrCertificate: %v", err)
			}
			verr := as[*tls.CertificateVerificationError](t, err)
			if len(verr.UnverifiedCertificates) == 0 || !verr.UnverifiedCertificates[0].Equal(srv.Certificate()) {
				t.Fatalf("UnverifiedCertificates: %d certificates, want the server's first", len(verr.UnverifiedCertificates))
			}
			if ce := as[*CertificateError](t, err); ce.Err != verr.Err {
				t.Errorf("CertificateError.Err %v, want the verification error's %v", ce.Err, verr.Err)
			}
		})
	}
}
