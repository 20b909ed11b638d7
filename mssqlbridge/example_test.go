package mssqlbridge_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/integratedauth/ntlm"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// The one-line switch: sql.Open("tdsbridge", dsn) in place of sql.Open("sqlserver", dsn), with
// the same DSN. (The server here is the embedded test server; use your own DSN.)
func Example() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	dsn := srv.DSN("encrypt=true", "certificate="+srv.CAFile())

	db, err := sql.Open(mssqlbridge.DriverName, dsn) // was: sql.Open("sqlserver", dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
	// Output: 1
}

// NewConnector replaces mssql.NewConnector; the result is a *mssql.Connector whose fields
// (SessionInitSQL, ...) can be set as usual.
func ExampleNewConnector() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := mssqlbridge.NewConnector(srv.DSN("encrypt=true", "certificate="+srv.CAFile()))
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var s string
	if err := db.QueryRowContext(context.Background(), "SELECT REPLICATE(CAST(N'ab' AS nvarchar(max)), 3)").Scan(&s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(s)
	// Output: ababab
}

// WithTLSConfig hands the connector a tls.Config of your own; the DSN still decides whether to
// encrypt.
func ExampleWithTLSConfig() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := mssqlbridge.NewConnector(srv.DSN("encrypt=true"), mssqlbridge.WithTLSConfig(srv.TLSConfig()))
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	fmt.Println(db.Ping())
	// Output: <nil>
}

// A server that does not support encryption is refused when the DSN says encrypt=true, before
// any login data is sent.
func Example_refusal() {
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptNotSup})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open(mssqlbridge.DriverName, srv.DSN("encrypt=true"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Ping()
	fmt.Println(errors.Is(err, mssqlbridge.ErrServerNoEncryption))
	// Output: true
}

// serverCertificate pins the server's own certificate: the connection succeeds only if the
// server presents exactly that certificate (here tdstest's self-signed one); a different one
// fails with a *CertificateError.
func ExampleNewConnector_serverCertificate() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := mssqlbridge.NewConnector(srv.DSN("encrypt=true", "serverCertificate="+srv.CAFile()))
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	fmt.Println(db.Ping())

	_, err = mssqlbridge.NewConnector(srv.DSN("encrypt=true", "serverCertificate="+srv.CAFile(), "certificate="+srv.CAFile()))
	fmt.Println(err)
	// Output:
	// <nil>
	// mssqlbridge: parse DSN: cannot specify both 'certificate' and 'serverCertificate' parameters
}

// With login-only encryption (encrypt=false against a server that offers encryption without
// requiring it) only the first LOGIN7 packet travels inside TLS. A login whose password would
// lie past that packet, here behind a 2,100-character workstation name at packet size 512, is
// refused before any byte of it is sent.
func ExampleErrSecretOutsideTLS() {
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open(mssqlbridge.DriverName, srv.DSN("encrypt=false", "certificate="+srv.CAFile(),
		"packet size=512", "workstation id="+strings.Repeat("w", 2100)))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Ping()
	fmt.Println(errors.Is(err, mssqlbridge.ErrSecretOutsideTLS))
	// Output: true
}

// A connector built by go-mssqldb itself, here its security-token connector (Entra ID access
// tokens), gets the bridged transport through a Dialer: the Dialer carries the DSN's
// encryption and TLS settings, the connector is built from DriverConfig (the driver's own
// encryption off), and the Dialer becomes the connector's Dialer. The token travels inside
// the bridge's TLS.
func ExampleNewDialer() {
	srv, err := tdstest.NewServer(tdstest.Config{FedAuthToken: "token-from-your-identity-provider"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	d, err := mssqlbridge.NewDialer(srv.DSN("encrypt=true", "certificate="+srv.CAFile()))
	if err != nil {
		log.Fatal(err)
	}
	cfg := d.DriverConfig()
	cfg.User, cfg.Password = "", "" // the token is the credential
	c, err := mssql.NewSecurityTokenConnector(cfg, func(ctx context.Context) (string, error) {
		return "token-from-your-identity-provider", nil // for example from azidentity
	})
	if err != nil {
		log.Fatal(err)
	}
	c.Dialer = d
	db := sql.OpenDB(c)
	defer db.Close()
	fmt.Println(db.Ping())
	// Output: <nil>
}

// A connector left with its own encryption on is refused on its first connection, before
// anything reaches the server: build it from Dialer.DriverConfig or DriverDSN instead.
func ExampleErrDriverEncryption() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	dsn := srv.DSN("encrypt=true", "certificate="+srv.CAFile())

	d, err := mssqlbridge.NewDialer(dsn)
	if err != nil {
		log.Fatal(err)
	}
	c, err := mssql.NewConnector(dsn) // wrong: DriverDSN(dsn) or d.DriverConfig()
	if err != nil {
		log.Fatal(err)
	}
	c.Dialer = d
	db := sql.OpenDB(c)
	defer db.Close()
	fmt.Println(errors.Is(db.Ping(), mssqlbridge.ErrDriverEncryption))
	// Output: true
}

// DriverDSN turns a DSN into the one a connector built from a DSN string (azuread's, for
// example) needs under a Dialer: the same parameters with encrypt=disable.
func ExampleDriverDSN() {
	drv, err := mssqlbridge.DriverDSN("sqlserver://db.example.com?database=shop&encrypt=true&fedauth=ActiveDirectoryDefault")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(drv)
	// Output: sqlserver://db.example.com?database=shop&encrypt=disable&fedauth=ActiveDirectoryDefault
}

// Integrated authentication with channel binding (Extended Protection): register a provider
// that wraps go-mssqldb's NTLM provider, and name it in the DSN with "epa enabled". Each
// NTLM authenticator then receives the tls-unique bindings of its bridged TLS connection.
// (Not run: it needs a SQL Server in a Windows domain.)
func ExampleRegisterChannelBindingProvider() {
	// At initialization, once per process.
	if err := mssqlbridge.RegisterChannelBindingProvider("ntlm-epa", ntlm.AuthProvider); err != nil {
		log.Fatal(err)
	}

	c, err := mssqlbridge.NewConnector(`sqlserver://DOMAIN%5Cuser:secret@sql.example.com?encrypt=true&authenticator=ntlm-epa&epa+enabled=true`)
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if err := db.Ping(); err != nil {
		log.Fatal(err)
	}
}

// WithLogger reports each phase of each connection: here a text handler keeps the phase
// and what was negotiated, and leaves out what varies from run to run (times, addresses, the
// cipher suite).
func ExampleWithLogger() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	keep := map[string]bool{slog.MessageKey: true, "phase": true, "mode": true, "tls_version": true}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if !keep[a.Key] {
				return slog.Attr{}
			}
			return a
		},
	}))
	c, err := mssqlbridge.NewConnector(srv.DSN("encrypt=true", "certificate="+srv.CAFile()), mssqlbridge.WithLogger(logger))
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if err := db.Ping(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// msg="mssqlbridge: TCP connect" phase=tcp
	// msg="mssqlbridge: PRELOGIN" phase=prelogin mode=full
	// msg="mssqlbridge: TLS handshake" phase=tls tls_version="TLS 1.2"
	// msg="mssqlbridge: LOGIN7 send" phase=login7
}

// A failed connection is a *ConnectError naming the host, the phase that failed and how long
// each phase took; the cause stays reachable with errors.Is and errors.As.
func ExampleConnectError() {
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptNotSup})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open(mssqlbridge.DriverName, srv.DSN("encrypt=true"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Ping()
	var ce *mssqlbridge.ConnectError
	if errors.As(err, &ce) {
		fmt.Println(ce.Phase, ce.Host == srv.Addr, errors.Is(err, mssqlbridge.ErrServerNoEncryption))
	}
	// Output: PRELOGIN true true
}
