package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// mitm is a loopback proxy that rewrites the ENCRYPTION value of the server's PRELOGIN reply
// and records every byte the client sends after its PRELOGIN.
type mitm struct {
	ln      net.Listener
	target  string
	rewrite prelogin.Encryption
	wg      sync.WaitGroup

	mu        sync.Mutex
	preLogins int    // client PRELOGIN packets seen
	after     []byte // client bytes after its PRELOGIN, all connections
}

func newMITM(t *testing.T, target string, rewrite prelogin.Encryption) *mitm {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mitm{ln: ln, target: target, rewrite: rewrite}
	m.wg.Add(1)
	go m.accept()
	t.Cleanup(func() { _ = ln.Close(); m.wg.Wait() })
	return m
}

func (m *mitm) accept() {
	defer m.wg.Done()
	for {
		client, err := m.ln.Accept()
		if err != nil {
			return
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.proxy(client)
		}()
	}
}

func (m *mitm) proxy(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", m.target)
	if err != nil {
		return
	}
	defer server.Close()
	// Client -> server: the PRELOGIN packet, then everything else recorded.
	crd := tds.NewReader(client, tds.ReaderConfig{})
	h, body, err := crd.ReadPacket()
	if err != nil || h.Type != tds.TypePrelogin {
		return
	}
	m.mu.Lock()
	m.preLogins++
	m.mu.Unlock()
	if _, err := server.Write(append(h.Append(nil), body...)); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := client.Read(buf)
			m.mu.Lock()
			m.after = append(m.after, buf[:n]...)
			m.mu.Unlock()
			if n > 0 {
				_, _ = server.Write(buf[:n])
			}
			if err != nil {
				_ = server.Close()
				return
			}
		}
	}()
	// Server -> client: the reply with ENCRYPTION rewritten, then the rest as is.
	srd := tds.NewReader(server, tds.ReaderConfig{})
	h, body, err = srd.ReadPacket()
	if err == nil {
		if _, err = prelogin.SetEncryption(body, m.rewrite); err == nil {
			_, err = client.Write(append(h.Append(nil), body...))
		}
	}
	if err == nil {
		_, _ = io.Copy(client, server)
	}
	_ = client.Close()
	<-done
}

func (m *mitm) observed() (int, []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.preLogins, append([]byte(nil), m.after...)
}

// TestMITMDowngrade: a man in the middle rewrites the server's ENCRYPTION reply to NOT_SUP (or
// OFF, which would mean login-only) while the client says encrypt=true. The connection fails
// with ErrServerNoEncryption and the proxy sees not one byte after the PRELOGIN: no LOGIN7
// (packet type 0x10), no TLS. go-mssqldb's own TLS refuses too (for NOT_SUP and OFF alike).
func TestMITMDowngrade(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	for _, rewrite := range []prelogin.Encryption{prelogin.EncryptNotSup, prelogin.EncryptOff} {
		t.Run(rewrite.String(), func(t *testing.T) {
			for _, arm := range dbArms {
				t.Run(arm.name, func(t *testing.T) {
					m := newMITM(t, srv.Addr, rewrite)
					dsn := strings.Replace(srv.DSN("encrypt=true", "certificate="+srv.CAFile()), srv.Addr, m.ln.Addr().String(), 1)
					db, err := arm.open(t, dsn)
					if err != nil {
						t.Fatal(err)
					}
					err = selectOne(db)
					if err == nil {
						t.Fatal("connection succeeded through a downgrading proxy")
					}
					if arm.name == "bridged" && !errors.Is(err, ErrServerNoEncryption) {
						t.Fatalf("got %v, want ErrServerNoEncryption", err)
					}
					_ = db.Close()
					_ = m.ln.Close()
					m.wg.Wait()
					n, after := m.observed()
					if n == 0 {
						t.Fatal("the proxy saw no PRELOGIN")
					}
					if len(after) != 0 {
						t.Fatalf("the client sent %d bytes after PRELOGIN (first byte %#x)", len(after), after[0])
					}
					t.Logf("%s: %v", arm.name, err)
				})
			}
		})
	}
}

// TestSmallPacketSizeWithTLS: with encryption and a requested packet size below 4096,
// go-mssqldb's own handshake fails (it reads the server's 4096-byte handshake packets with the
// requested size); the bridged handshake does not depend on the packet size.
func TestSmallPacketSizeWithTLS(t *testing.T) {
	srv := startServer(t, tdstest.Config{Cert: tdstest.CertLargeChain})
	dsn := srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "packet size=512")
	db, err := bridgedDB(t, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := selectOne(db); err != nil {
		t.Fatalf("bridged at packet size 512: %v", err)
	}
	ndb, err := nativeDB(t, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("go-mssqldb's own TLS at packet size 512: %v", errString(selectOne(ndb)))
}

// TestCertificateMatrix checks certificate verification, bridged and with go-mssqldb's own TLS:
// the outcome must be the same, and the bridged errors must name the problem.
func TestCertificateMatrix(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	dir := t.TempDir()
	derFile := filepath.Join(dir, "ca.der")
	if err := os.WriteFile(derFile, srv.CACertificate().Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	crtFile := filepath.Join(dir, "server.crt") // an extension msdsn does not accept
	if err := os.WriteFile(crtFile, srv.CACertificate().Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	other := newTestPKI(t).caFile // a certificate the server does not present
	// serverCertificate: the server's own (self-signed) certificate, compared byte for byte.
	serverCert := srv.CAFile()
	if !srv.CACertificate().Equal(srv.Certificate()) {
		t.Fatal("the test expects tdstest's default self-signed certificate")
	}
	cases := []struct {
		name      string
		params    []string
		opts      []Option
		ok        bool
		wantErr   error // bridged
		wantCause error // the *CertificateError's cause, when not an x509 error
	}{
		{"certificate file (PEM)", []string{"certificate=" + srv.CAFile()}, nil, true, nil, nil},
		{"certificate file (DER)", []string{"certificate=" + derFile}, nil, true, nil, nil},
		{"untrusted CA (system roots)", nil, nil, false, ErrCertificate, nil},
		{"TrustServerCertificate", []string{"TrustServerCertificate=true"}, nil, true, nil, nil},
		{"hostNameInCertificate matching", []string{"certificate=" + srv.CAFile(), "hostNameInCertificate=localhost"}, nil, true, nil, nil},
		{"wrong host name", []string{"certificate=" + srv.CAFile(), "hostNameInCertificate=wrong.example"}, nil, false, ErrCertificate, nil},
		{"missing certificate file", []string{"certificate=" + missing}, nil, false, ErrCertificateFile, nil},
		{"caller tls.Config", nil, []Option{WithTLSConfig(srv.TLSConfig())}, true, nil, nil},
		{"hostNameInCertificate with colon, other common name", []string{"certificate=" + srv.CAFile(), "hostNameInCertificate=localhost:1"}, nil, false, ErrCertificate, nil},
		{"serverCertificate matching", []string{"serverCertificate=" + serverCert}, nil, true, nil, nil},
		{"serverCertificate of another server", []string{"serverCertificate=" + other}, nil, false, ErrCertificate, errServerCertificateMismatch},
		{"serverCertificate with untrusted-CA system roots", []string{"serverCertificate=" + serverCert, "TrustServerCertificate=false"}, nil, true, nil, nil},
		{"serverCertificate file missing", []string{"serverCertificate=" + missing}, nil, false, ErrCertificateFile, nil},
		{"serverCertificate file unsupported", []string{"serverCertificate=" + crtFile}, nil, false, ErrCertificateFile, nil},
		{"certificate and serverCertificate", []string{"certificate=" + srv.CAFile(), "serverCertificate=" + serverCert}, nil, false, errCertificateAndServerCertificate, nil},
		{"serverCertificate and hostNameInCertificate", []string{"serverCertificate=" + serverCert, "hostNameInCertificate=localhost"}, nil, false, errServerCertificateAndHostName, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dsn := srv.DSN(append([]string{"encrypt=true"}, tc.params...)...)
			var berr error
			db, err := bridgedDB(t, dsn, tc.opts...)
			if err == nil {
				berr = selectOne(db)
			} else {
				berr = err
			}
			switch {
			case tc.ok && berr != nil:
				t.Fatalf("bridged: %v, want success", berr)
			case !tc.ok && !errors.Is(berr, tc.wantErr):
				t.Fatalf("bridged: %v, want %v", berr, tc.wantErr)
			}
			if errors.Is(tc.wantErr, ErrCertificate) {
				var ce *CertificateError
				if !errors.As(berr, &ce) || ce.Host == "" {
					t.Fatalf("bridged: %v is not a *CertificateError naming the host", berr)
				}
				if !strings.Contains(berr.Error(), ce.Host) {
					t.Fatalf("bridged: %v does not name the host %q", berr, ce.Host)
				}
				var ua x509.UnknownAuthorityError
				var he x509.HostnameError
				switch {
				case tc.wantCause != nil:
					if !errors.Is(ce.Err, tc.wantCause) {
						t.Fatalf("bridged: cause %v, want %v", ce.Err, tc.wantCause)
					}
				case !errors.As(berr, &ua) && !errors.As(berr, &he):
					t.Fatalf("bridged: %v does not wrap the x509 cause", berr)
				}
			}
			var fe *CertificateFileError
			if errors.Is(tc.wantErr, ErrCertificateFile) && (!errors.As(berr, &fe) || !strings.Contains(berr.Error(), fe.File)) {
				t.Fatalf("bridged: %v is not a *CertificateFileError naming the file", berr)
			}
			if tc.opts != nil {
				return // no DSN equivalent for go-mssqldb
			}
			var nerr error
			ndb, err := nativeDB(t, dsn)
			if err == nil {
				nerr = selectOne(ndb)
			} else {
				nerr = err
			}
			if (nerr == nil) != (berr == nil) {
				t.Errorf("outcomes differ: bridged %v, native %v", errString(berr), errString(nerr))
			}
			t.Logf("bridged: %v; native: %v", errString(berr), errString(nerr))
		})
	}
}

// TestTLSMin: tlsmin is honoured: 1.2 works inside PRELOGIN; 1.3 inside PRELOGIN fails against
// a server that, like SQL Server, speaks at most TLS 1.2 there (go-mssqldb's own TLS too); 1.3
// with strict works.
func TestTLSMin(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	for _, tc := range []struct {
		encrypt, tlsmin string
		ok              bool
	}{
		{"true", "1.2", true},
		{"true", "1.3", false},
		{"strict", "1.3", true},
	} {
		t.Run(tc.encrypt+"/"+tc.tlsmin, func(t *testing.T) {
			dsn := srv.DSN("encrypt="+tc.encrypt, "certificate="+srv.CAFile(), "tlsmin="+tc.tlsmin)
			berr, nerr := selectBoth(t, dsn)
			if (berr == nil) != tc.ok {
				t.Fatalf("bridged: %v, want success %v", errString(berr), tc.ok)
			}
			if (nerr == nil) != (berr == nil) {
				t.Errorf("outcomes differ: bridged %v, native %v", errString(berr), errString(nerr))
			}
			t.Logf("bridged: %v; native: %v", errString(berr), errString(nerr))
		})
	}
}

// TestWithTLSConfigReplacesDSNFiles: with WithTLSConfig, the DSN's certificate and
// serverCertificate files are not read (a missing file does not fail the connection) and not
// used (a file naming another CA, or another server's certificate, does not either): the
// caller's config alone decides.
func TestWithTLSConfigReplacesDSNFiles(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	missing := filepath.Join(t.TempDir(), "missing.pem")
	other := newTestPKI(t).caFile
	for name, param := range map[string]string{
		"missing certificate":       "certificate=" + missing,
		"another CA":                "certificate=" + other,
		"missing serverCertificate": "serverCertificate=" + missing,
		"another serverCertificate": "serverCertificate=" + other,
	} {
		t.Run(name, func(t *testing.T) {
			dsn := srv.DSN("encrypt=true", param)
			// Without the option the DSN's file decides, and fails.
			db, err := bridgedDB(t, dsn)
			if err != nil {
				t.Fatal(err)
			}
			if err := selectOne(db); !errors.Is(err, ErrCertificate) && !errors.Is(err, ErrCertificateFile) {
				t.Fatalf("without WithTLSConfig: %v, want a certificate failure", errString(err))
			}
			db, err = bridgedDB(t, dsn, WithTLSConfig(srv.TLSConfig()))
			if err != nil {
				t.Fatal(err)
			}
			if err := selectOne(db); err != nil {
				t.Fatalf("with WithTLSConfig: %v", err)
			}
			c, err := NewConnector(dsn, WithTLSConfig(srv.TLSConfig()))
			if err != nil {
				t.Fatal(err)
			}
			s := c.Dialer.(*dialer).s
			if s.file != nil || s.serverCert != nil {
				t.Fatalf("a DSN file loader was started despite WithTLSConfig")
			}
		})
	}
}

// TestNewConnectorConfigServerName: NewConnectorConfig uses a ServerName set by hand in
// cfg.TLSConfig as go-mssqldb does (the certificate is checked against it, not against the
// host dialed), and both drivers reach the same outcome on the same server.
func TestNewConnectorConfigServerName(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	for _, tc := range []struct {
		serverName string
		ok         bool
	}{
		{"localhost", true},      // named by the certificate; the host dialed is 127.0.0.1
		{"wrong.example", false}, // not named: the check must not fall back to 127.0.0.1
		{"", true},               // empty: the host dialed (go-mssqldb would refuse the config)
	} {
		t.Run(tc.serverName, func(t *testing.T) {
			cfg, err := msdsn.Parse(srv.DSN("encrypt=true"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.TLSConfig = &tls.Config{RootCAs: srv.CertPool(), ServerName: tc.serverName}
			bc, err := NewConnectorConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			berr := selectOne(openDB(t, bc))
			if (berr == nil) != tc.ok {
				t.Fatalf("bridged: %v, want success %v", errString(berr), tc.ok)
			}
			var ce *CertificateError
			if !tc.ok && (!errors.As(berr, &ce) || ce.Host != tc.serverName) {
				t.Fatalf("bridged: %v is not a *CertificateError for %q", berr, tc.serverName)
			}
			if tc.serverName == "" {
				return
			}
			nerr := selectOne(openDB(t, mssql.NewConnectorConfig(cfg)))
			if (nerr == nil) != (berr == nil) {
				t.Errorf("outcomes differ: bridged %v, native %v", errString(berr), errString(nerr))
			}
		})
	}
}

// TestNewConnectorConfigServerCertificate: a config parsed by msdsn with serverCertificate
// carries msdsn's own byte comparison; through NewConnectorConfig a mismatch is a
// *CertificateError naming the host, like the DSN path, and a match connects.
func TestNewConnectorConfigServerCertificate(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	other := newTestPKI(t).caFile
	for _, tc := range []struct {
		file string
		ok   bool
	}{{srv.CAFile(), true}, {other, false}} {
		cfg, err := msdsn.Parse(srv.DSN("encrypt=true", "serverCertificate="+tc.file))
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewConnectorConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		berr := selectOne(openDB(t, c))
		var ce *CertificateError
		switch {
		case tc.ok && berr != nil:
			t.Fatalf("%s: %v, want success", tc.file, berr)
		case !tc.ok && (!errors.As(berr, &ce) || ce.Host == "" || !strings.Contains(ce.Err.Error(), "doesn't match")):
			t.Fatalf("%s: %v, want a *CertificateError for the mismatch", tc.file, berr)
		}
		nerr := selectOne(openDB(t, mssql.NewConnectorConfig(cfg)))
		if (nerr == nil) != (berr == nil) {
			t.Errorf("outcomes differ: bridged %v, native %v", errString(berr), errString(nerr))
		}
	}
}
