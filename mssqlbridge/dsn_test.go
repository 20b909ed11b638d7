package mssqlbridge

import (
	"context"
	"crypto/x509"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// TestParseDSNMatchesMsdsn: for DSNs in the three forms, parseDSN gives the certificate file
// and otherwise the same parameters as msdsn.Parse of the whole DSN (which reads the file).
func TestParseDSNMatchesMsdsn(t *testing.T) {
	pki := newTestPKI(t)
	ca := pki.caFile
	cases := map[string]string{
		"url":              "sqlserver://sa:p%40ss@db.example:1433/inst?database=x&certificate=" + ca + "&encrypt=true",
		"url first":        "sqlserver://sa@db.example?Certificate=" + ca + "&encrypt=strict",
		"url absent":       "sqlserver://sa@db.example?encrypt=true&database=y",
		"ado":              "server=db.example;user id=sa;certificate=" + ca + ";encrypt=true;password=\"a;b\"\"c\"",
		"ado quoted":       "server=db.example; Certificate = \"" + ca + "\" ;encrypt=true",
		"ado last wins":    "server=db.example;certificate=/nonexistent.pem;encrypt=true;certificate=" + ca,
		"ado absent":       "server=db.example;encrypt=disable;app name=a",
		"odbc":             "odbc:server=db.example;certificate=" + ca + ";encrypt=true;password={x;}}y}",
		"odbc braced":      "odbc:server=db.example;certificate={" + ca + "} ;encrypt=true",
		"odbc last":        "odbc:server=db.example;encrypt=true;certificate=" + ca,
		"odbc absent":      "odbc:server=db.example;encrypt=true",
		"odbc key spacing": "odbc:server=db.example; CERTIFICATE  =" + ca + ";encrypt=true",
		"url server cert":  "sqlserver://sa@db.example?encrypt=true&ServerCertificate=" + ca,
		"ado server cert":  "server=db.example;encrypt=true;servercertificate=" + ca,
		"ado synonym":      "server=db.example;Server Certificate=" + ca + ";encrypt=true",
		"odbc server cert": "odbc:server=db.example;serverCertificate={" + ca + "};encrypt=true",
		"ado open quote":   "server=db.example;certificate=" + ca + ";encrypt=true;password=\"a;b",
	}
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := msdsn.Parse(dsn)
			if err != nil {
				t.Fatalf("msdsn.Parse: %v", err)
			}
			got, file, err := parseDSN(dsn)
			if err != nil {
				t.Fatalf("parseDSN: %v", err)
			}
			if file.certificate != want.Parameters[certificateKey] {
				t.Fatalf("certificate file %q, want %q", file.certificate, want.Parameters[certificateKey])
			}
			if file.serverCertificate != want.Parameters[serverCertificateKey] {
				t.Fatalf("serverCertificate file %q, want %q", file.serverCertificate, want.Parameters[serverCertificateKey])
			}
			if !maps.Equal(got.Parameters, want.Parameters) {
				t.Fatalf("parameters differ:\n got %v\nwant %v", got.Parameters, want.Parameters)
			}
			if got.Host != want.Host || got.Port != want.Port || got.Instance != want.Instance ||
				got.Password != want.Password || got.Encryption != want.Encryption ||
				got.HostInCertificateProvided != want.HostInCertificateProvided {
				t.Fatalf("config differs: got %+v, want %+v", got, want)
			}
			// serverCertificate's InsecureSkipVerify and byte comparison are set per connection
			// (clientTLSConfig), not in the parsed config.
			skipVerify := want.TLSConfig != nil && want.TLSConfig.InsecureSkipVerify && file.serverCertificate == ""
			if want.TLSConfig != nil && (got.TLSConfig == nil || got.TLSConfig.ServerName != want.TLSConfig.ServerName ||
				got.TLSConfig.InsecureSkipVerify != skipVerify) {
				t.Fatalf("TLS config differs")
			}
		})
	}
}

// TestParseDSNDoesNotReadCertificate: a missing certificate file does not fail NewConnector
// (the file is read in the background); msdsn.Parse would fail on it.
func TestParseDSNDoesNotReadCertificate(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	for _, dsn := range []string{
		"sqlserver://sa@db.example?encrypt=true&certificate=" + missing,
		"server=db.example;encrypt=true;certificate=" + missing,
		"odbc:server=db.example;encrypt=true;certificate={" + missing + "}",
	} {
		if _, err := msdsn.Parse(dsn); err == nil {
			t.Fatalf("msdsn.Parse(%q) succeeded; the test expects it to read the file", dsn)
		}
		if _, err := NewConnector(dsn); err != nil {
			t.Fatalf("NewConnector(%q): %v", dsn, err)
		}
	}
}

// TestParseDSNRefusesCombinations: the certificate parameter combinations msdsn refuses are
// refused in every DSN form, with msdsn's words, although parseDSN takes those parameters out
// before msdsn sees them.
func TestParseDSNRefusesCombinations(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want error
	}{
		{"sqlserver://sa@db.example?encrypt=true&certificate=a.pem&serverCertificate=b.pem", errCertificateAndServerCertificate},
		{"server=db.example;encrypt=true;certificate=a.pem;server certificate=b.pem", errCertificateAndServerCertificate},
		{"odbc:server=db.example;encrypt=true;serverCertificate={b.pem};certificate=a.pem", errCertificateAndServerCertificate},
		{"sqlserver://sa@db.example?serverCertificate=b.pem&hostNameInCertificate=db", errServerCertificateAndHostName},
		{"server=db.example;host name in certificate=db;serverCertificate=b.pem", errServerCertificateAndHostName},
		{"odbc:server=db.example;hostnameincertificate=db;servercertificate=b.pem", errServerCertificateAndHostName},
	} {
		_, err := NewConnector(tc.dsn)
		if !errors.Is(err, tc.want) {
			t.Fatalf("NewConnector(%q): %v, want %v", tc.dsn, err, tc.want)
		}
		_, merr := msdsn.Parse(tc.dsn)
		if merr == nil || !strings.Contains(merr.Error(), tc.want.Error()) {
			t.Fatalf("msdsn.Parse(%q): %v, want its refusal %q", tc.dsn, merr, tc.want)
		}
	}
}

func TestParseDSNErrors(t *testing.T) {
	for _, dsn := range []string{
		"sqlserver://sa@db.example?encrypt=maybe",
		"sqlserver://sa@db.example?certificate=a.pem&Certificate=b.pem",
		"odbc:server={unterminated",
		"server=db.example;packet size=abc",
	} {
		_, err := NewConnector(dsn)
		if err == nil {
			t.Fatalf("NewConnector(%q) succeeded", dsn)
		}
		_, merr := msdsn.Parse(dsn)
		if merr == nil {
			t.Fatalf("msdsn.Parse(%q) succeeded but NewConnector failed: %v", dsn, err)
		}
	}
}

func TestFilePoolLoad(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name    string
		file    string
		wantErr bool
	}{
		{"pem", pki.caFile, false},
		{"der", pki.caDER, false},
		{"PEM upper-case extension", write("ca.PEM", pki.caPEM), false},
		{"missing", filepath.Join(dir, "missing.pem"), true},
		{"unsupported extension", write("ca.crt", pki.caPEM), true},
		{"no certificate", write("empty.pem", []byte("nothing here\n")), true},
		{"bad der", write("bad.der", []byte{0x30, 0x03, 0x01}), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newFilePoolLoad(tc.file)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			pool, err := l.wait(ctx)
			if tc.wantErr {
				var fe *CertificateFileError
				if !errors.As(err, &fe) || fe.File != tc.file || !errors.Is(err, ErrCertificateFile) {
					t.Fatalf("got %v, want a *CertificateFileError for %s", err, tc.file)
				}
				return
			}
			if err != nil || pool == nil || len(l.certs) != 1 || !l.certs[0].Equal(pki.caCert) {
				t.Fatalf("got pool %v, certs %d, err %v", pool, len(l.certs), err)
			}
		})
	}
}

// TestPoolWaitContext: a waiter gives up when its context ends; the load itself continues.
func TestPoolWaitContext(t *testing.T) {
	release := make(chan struct{})
	l := newPoolLoad(func() (*x509.CertPool, error) {
		<-release
		return nil, errors.New("done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	close(release)
	if _, err := l.wait(context.Background()); err == nil || err.Error() != "done" {
		t.Fatalf("got %v, want the load's error", err)
	}
}

// TestSettingsPools: encrypt=disable loads nothing, and TrustServerCertificate needs no
// system roots.
func TestSettingsPools(t *testing.T) {
	for _, tc := range []struct {
		dsn        string
		system     bool
		file       bool
		tlsNilBase bool
	}{
		{"sqlserver://db.example?encrypt=disable&certificate=x.pem", false, false, true},
		{"sqlserver://db.example?encrypt=true", true, false, false},
		{"sqlserver://db.example?encrypt=true&TrustServerCertificate=true", false, false, false},
		{"sqlserver://db.example", false, false, false}, // go-mssqldb trusts by default without encrypt
		{"sqlserver://db.example?encrypt=true&certificate=x.pem", false, true, false},
		{"sqlserver://db.example?encrypt=strict", true, false, false},
	} {
		cfg, file, err := parseDSN(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSettings(cfg, file, options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.system != tc.system || (s.file != nil) != tc.file || (s.tlsBase == nil) != tc.tlsNilBase {
			t.Errorf("%s: system %v, file %v, nil base %v; want %v, %v, %v", tc.dsn, s.system, s.file != nil, s.tlsBase == nil, tc.system, tc.file, tc.tlsNilBase)
		}
		if s.file != nil {
			_, _ = s.file.wait(context.Background()) // let the goroutine end
		}
	}
	_, _ = systemRoots.wait(context.Background())
}

func TestDefaultSPN(t *testing.T) {
	hostname, _ := os.Hostname()
	for _, tc := range []struct {
		cfg  msdsn.Config
		want string
	}{
		{msdsn.Config{Host: "db.example"}, "MSSQLSvc/db.example:1433"},
		{msdsn.Config{Host: "db.example", Port: 14330}, "MSSQLSvc/db.example:14330"},
		{msdsn.Config{Host: "db.example", Instance: "SQLEXPRESS"}, "MSSQLSvc/db.example:SQLEXPRESS"},
		{msdsn.Config{Host: "127.0.0.1", Port: 1500}, "MSSQLSvc/" + hostname + ":1500"},
	} {
		if got := defaultSPN(tc.cfg); got != tc.want {
			t.Errorf("defaultSPN(%+v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestSendValue: every encrypt setting maps to the ENCRYPTION value go-mssqldb sends for it,
// and one the conn does not know is an error, never a guess.
func TestSendValue(t *testing.T) {
	for enc, want := range map[msdsn.Encryption]prelogin.Encryption{
		msdsn.EncryptionDisabled: prelogin.EncryptNotSup,
		msdsn.EncryptionOff:      prelogin.EncryptOff,
		msdsn.EncryptionRequired: prelogin.EncryptOn,
		msdsn.EncryptionStrict:   prelogin.EncryptStrict,
	} {
		if got, err := (&settings{encryption: enc}).sendValue(); err != nil || got != want {
			t.Errorf("encrypt %v: %v, %v; want %v", enc, got, err, want)
		}
	}
	if _, err := (&settings{encryption: 99}).sendValue(); err == nil {
		t.Error("an unknown encrypt setting gave no error")
	}
}
