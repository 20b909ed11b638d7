package mssqlbridge

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// recordingDialer dials TCP and records every byte the client writes to its sockets.
type recordingDialer struct {
	d  net.Dialer
	mu sync.Mutex
	w  []byte
}

func (r *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := r.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, r: r}, nil
}

func (r *recordingDialer) written() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.w...)
}

type recordingConn struct {
	net.Conn
	r *recordingDialer
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.r.mu.Lock()
	c.r.w = append(c.r.w, p...)
	c.r.mu.Unlock()
	return c.Conn.Write(p)
}

// ucs2 is s as LOGIN7 carries it.
func ucs2(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// TestDialerTokenConnector puts the bridged transport under go-mssqldb's own security-token
// connector, against a tdstest server that takes FEDAUTH tokens: in full encryption, strict
// and login-only the configured token logs in and any other is refused with login error
// 18456; the token never appears on the wire in clear.
func TestDialerTokenConnector(t *testing.T) {
	const token = "eyJ0eXAiOiJKV1QifQ.bridged-token-value"
	tests := []struct {
		name    string
		server  tdstest.Config
		encrypt string
	}{
		{"full", tdstest.Config{FedAuthToken: token}, "true"},
		{"strict", tdstest.Config{FedAuthToken: token, Encryption: tdstest.EncryptStrict}, "strict"},
		{"login-only", tdstest.Config{FedAuthToken: token, Encryption: tdstest.EncryptOff}, "false"},
	}
	for _, tc := range tests {
		srv := startServer(t, tc.server)
		for _, give := range []string{token, token + "-wrong"} {
			ok := give == token
			t.Run(tc.name+"/"+map[bool]string{true: "right", false: "wrong"}[ok], func(t *testing.T) {
				rec := &recordingDialer{}
				d, err := NewDialer(srv.DSN("encrypt="+tc.encrypt, "certificate="+srv.CAFile()), WithDialer(rec))
				if err != nil {
					t.Fatal(err)
				}
				cfg := d.DriverConfig()
				cfg.User, cfg.Password = "", ""
				c, err := mssql.NewSecurityTokenConnector(cfg, func(context.Context) (string, error) { return give, nil })
				if err != nil {
					t.Fatal(err)
				}
				c.Dialer = d
				err = selectOne(openDB(t, c))
				if ok {
					if err != nil {
						t.Fatal(err)
					}
				} else {
					var merr mssql.Error
					if !errors.As(err, &merr) || merr.Number != 18456 || !strings.Contains(merr.Message, "token-identified principal") {
						t.Fatalf("err = %v, want login error 18456 for the token-identified principal", err)
					}
				}
				if bytes.Contains(rec.written(), ucs2(give)) {
					t.Fatal("the security token was sent in clear")
				}
				if len(rec.written()) == 0 {
					t.Fatal("nothing was written through the caller's dialer")
				}
			})
		}
	}
}

// TestDialerDriverEncryptionOn: a connector whose own encryption was left on is refused with
// ErrDriverEncryption before any byte reaches the server, for every setting that is not
// disable.
func TestDialerDriverEncryptionOn(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	for _, enc := range []string{"true", "false", "strict"} {
		t.Run(enc, func(t *testing.T) {
			dsn := srv.DSN("encrypt="+enc, "certificate="+srv.CAFile())
			rec := &recordingDialer{}
			d, err := NewDialer(dsn, WithDialer(rec))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := msdsn.Parse(dsn) // the mistake: the DSN's own encryption setting
			if err != nil {
				t.Fatal(err)
			}
			c := mssql.NewConnectorConfig(cfg)
			c.Dialer = d
			err = selectOne(openDB(t, c))
			if !errors.Is(err, ErrDriverEncryption) {
				t.Fatalf("err = %v, want ErrDriverEncryption", err)
			}
			if enc != "strict" && len(rec.written()) != 0 {
				t.Fatalf("%d bytes reached the server", len(rec.written()))
			}
		})
	}
}

// TestDialerStrictDriverTLS: with encrypt=strict in the connector's own config, go-mssqldb
// writes a TLS ClientHello first; the conn refuses it without sending it on.
func TestDialerStrictDriverTLS(t *testing.T) {
	srv := startServer(t, tdstest.Config{})
	dsn := srv.DSN("encrypt=true", "certificate="+srv.CAFile())
	rec := &recordingDialer{}
	d, err := NewDialer(dsn, WithDialer(rec))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := msdsn.Parse(srv.DSN("encrypt=strict", "certificate="+srv.CAFile()))
	if err != nil {
		t.Fatal(err)
	}
	c := mssql.NewConnectorConfig(cfg)
	c.Dialer = d
	err = selectOne(openDB(t, c))
	if !errors.Is(err, ErrDriverEncryption) || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("err = %v, want ErrDriverEncryption naming the driver's TLS handshake", err)
	}
	if n := len(rec.written()); n != 0 {
		t.Fatalf("%d bytes reached the server", n)
	}
}

// TestDialerAnyConnector: a connector built by mssql.NewConnectorConfig from DriverConfig,
// with the Dialer, behaves as NewConnector for every encryption setting.
func TestDialerAnyConnector(t *testing.T) {
	for _, tc := range []struct {
		encrypt string
		server  tdstest.Config
	}{
		{"true", tdstest.Config{}},
		{"strict", tdstest.Config{Encryption: tdstest.EncryptStrict}},
		{"false", tdstest.Config{Encryption: tdstest.EncryptOff}},
		{"disable", tdstest.Config{Encryption: tdstest.EncryptNotSup}},
	} {
		t.Run(tc.encrypt, func(t *testing.T) {
			srv := startServer(t, tc.server)
			d, err := NewDialer(srv.DSN("encrypt="+tc.encrypt, "certificate="+srv.CAFile()))
			if err != nil {
				t.Fatal(err)
			}
			c := mssql.NewConnectorConfig(d.DriverConfig())
			c.Dialer = d
			if err := selectOne(openDB(t, c)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDriverDSN(t *testing.T) {
	tests := map[string]struct {
		dsn string
		db  string // the database the result must still name
	}{
		"URL with encrypt":    {"sqlserver://u:p@h:1433?encrypt=true&database=shop", "shop"},
		"URL without encrypt": {"sqlserver://u:p@h:1433?database=shop", "shop"},
		"URL strict":          {"sqlserver://u:p@h?database=shop&encrypt=strict&fedauth=ActiveDirectoryDefault", "shop"},
		"ADO":                 {"server=h;user id=u;password=p;encrypt=true;database=shop", "shop"},
		"ADO trailing ;":      {"server=h;database=shop;Encrypt=strict;", "shop"},
		"ADO quoted":          {`server=h;password="a;encrypt=true";database=shop`, "shop"},
		"ODBC":                {"odbc:server=h;encrypt=yes;database=shop", "shop"},
		"ODBC braces":         {"odbc:server=h;password={x;encrypt=yes};database=shop", "shop"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := DriverDSN(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := msdsn.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Encryption != msdsn.EncryptionDisabled || cfg.Database != tc.db || cfg.Host != "h" {
				t.Fatalf("DriverDSN(%q) = %q: encryption %v, database %q, host %q", tc.dsn, out, cfg.Encryption, cfg.Database, cfg.Host)
			}
			orig, err := msdsn.Parse(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Password != orig.Password {
				t.Fatalf("password changed: %q, was %q", cfg.Password, orig.Password)
			}
		})
	}
	if _, err := DriverDSN("sqlserver://h?encrypt=true&encrypt=false"); err == nil {
		t.Fatal("DriverDSN accepted a URL repeating encrypt")
	}
}
