package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // the native driver, "sqlserver", for comparison
	"github.com/stretchr/testify/require"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
)

// openBridged opens a database/sql handle on the bridged connector.
func openBridged(t *testing.T, dsn string, opts ...mssqlbridge.Option) *sql.DB {
	t.Helper()
	c, err := mssqlbridge.NewConnector(dsn, opts...)
	require.NoError(t, err, "NewConnector(%q)", dsn)
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openNative opens go-mssqldb with its own TLS on the same DSN.
func openNative(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func selectOne(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&v); err != nil {
		return err
	}
	if v != 1 {
		return errors.New("SELECT 1 returned " + strconv.Itoa(v))
	}
	return nil
}

// TestConnectEachMode connects in every encryption mode with the bridge and with go-mssqldb's own
// TLS: both must succeed against a server configured like SQL Server's default. Strict mode
// always verifies the certificate (go-mssqldb ignores TrustServerCertificate there), so it trusts
// the server's own certificate, by file; it skips against a server without TDS 8.0.
func TestConnectEachMode(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, mode := range []string{"disable", "false", "true", "strict"} {
			t.Run(mode, func(t *testing.T) {
				trust := []string{"TrustServerCertificate=true"}
				if mode == "strict" {
					requireTDS8(t, tg)
					trust = trustFile(t, tg)
				}
				dsn := tg.dsn(append([]string{"encrypt=" + mode}, trust...)...)
				require.NoError(t, selectOne(ctxFor(t, 30*time.Second), openBridged(t, dsn)), "bridged")
				require.NoError(t, selectOne(ctxFor(t, 30*time.Second), openNative(t, dsn)), "native go-mssqldb")
			})
		}
	})
}

const mib = 1 << 20

// Queries for 1 MiB values whose content is a repeating 16-character pattern, so that a lost,
// doubled or shifted byte anywhere changes the value.
const (
	pattern        = "0123456789abcdef"
	nvarcharQuery  = "SELECT REPLICATE(CAST(N'" + pattern + "' AS nvarchar(max)), 32768)"                       // 1 MiB of UTF-16
	varbinaryQuery = "SELECT CAST(REPLICATE(CAST('" + pattern + "' AS varchar(max)), 65536) AS varbinary(max))" // 1 MiB
)

// TestLargeValues fetches 1 MiB nvarchar(max) and varbinary(max) values at packet sizes 4096 and
// 16383, encrypted and not, and checks every byte.
func TestLargeValues(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, mode := range []string{"true", "disable"} {
			for _, size := range []string{"4096", "16383"} {
				t.Run("encrypt="+mode+"/packet="+size, func(t *testing.T) {
					db := openBridged(t, tg.dsn("encrypt="+mode, "TrustServerCertificate=true", "packet size="+size))
					ctx := ctxFor(t, 60*time.Second)

					var s string
					require.NoError(t, db.QueryRowContext(ctx, nvarcharQuery).Scan(&s))
					require.Equal(t, mib/2, len(s), "nvarchar(max) length in characters")
					require.True(t, s == strings.Repeat(pattern, 32768), "nvarchar(max) content differs")

					var b []byte
					require.NoError(t, db.QueryRowContext(ctx, varbinaryQuery).Scan(&b))
					require.Equal(t, mib, len(b), "varbinary(max) length")
					require.True(t, string(b) == strings.Repeat(pattern, 65536), "varbinary(max) content differs")
				})
			}
		}
	})
}

// TestCancel cancels a running query through its context: the query ends with the context's
// error long before the server would have finished, and the pool stays usable. It skips against
// a server that refuses WAITFOR DELAY.
func TestCancel(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, mode := range []string{"true", "disable"} {
			t.Run("encrypt="+mode, func(t *testing.T) {
				db := openBridged(t, tg.dsn("encrypt="+mode, "TrustServerCertificate=true"))
				db.SetMaxOpenConns(1)
				require.NoError(t, selectOne(ctxFor(t, 30*time.Second), db))
				requireWaitfor(t, tg, db)

				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err := db.ExecContext(ctx, "WAITFOR DELAY '00:00:20'")
				require.Error(t, err, "the 20 s wait must be cancelled")
				require.ErrorIs(t, err, context.DeadlineExceeded)
				// Not a speed target: a cancel that did not reach the server would take 20 s.
				require.Less(t, time.Since(start), 10*time.Second, "cancellation did not end the query")

				require.NoError(t, selectOne(ctxFor(t, 30*time.Second), db), "the connection after a cancel")
			})
		}
	})
}

// TestCertificates checks verification of the server's certificate the way users configure it,
// bridged and native side by side: both must agree on every case. Each case states every
// certificate parameter it needs; target.dsn drops those of the base DSN.
func TestCertificates(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		cases := []struct {
			name   string
			params func(t *testing.T) []string
			ok     bool
		}{
			{"TrustServerCertificate", func(*testing.T) []string { return []string{"TrustServerCertificate=true"} }, true},
			{"default verifies against system roots", func(*testing.T) []string { return nil }, false},
			{"server certificate file", func(t *testing.T) []string { return trustFile(t, tg) }, true},
			{"wrong hostNameInCertificate", func(t *testing.T) []string {
				p := trustFile(t, tg)
				return []string{p[0], p[1] + ".invalid"}
			}, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				params := tc.params(t)
				dsn := tg.dsn(append([]string{"encrypt=true"}, params...)...)
				bridged := selectOne(ctxFor(t, 30*time.Second), openBridged(t, dsn))
				native := selectOne(ctxFor(t, 30*time.Second), openNative(t, dsn))
				if tc.ok {
					require.NoError(t, bridged, "bridged")
					require.NoError(t, native, "native go-mssqldb")
					return
				}
				require.ErrorIs(t, bridged, mssqlbridge.ErrCertificate, "bridged")
				require.Error(t, native, "native go-mssqldb")
			})
		}
	})
}

// trustFile returns the DSN parameters that trust the target's own certificate: the certificate
// written to a file and the name to check it against. It skips the test when the certificate
// names no host (SQL Server's self-signed fallback certificate has only a common name, which Go
// does not check host names against).
func trustFile(t *testing.T, tg target) []string {
	t.Helper()
	leaf := serverCertificate(t, tg)
	if len(leaf.DNSNames) == 0 {
		t.Skipf("%s presents a certificate with no DNS name (subject %q): install a certificate with one to verify it by file", tg.name, leaf.Subject)
	}
	certFile := filepath.Join(t.TempDir(), "server.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}), 0o600))
	return []string{"certificate=" + certFile, "hostNameInCertificate=" + leaf.DNSNames[0]}
}

// serverCertificate connects once without verification and returns the certificate the server
// presented, the way an administrator would export it.
func serverCertificate(t *testing.T, tg target) *x509.Certificate {
	t.Helper()
	var leaf *x509.Certificate
	capture := &tls.Config{
		InsecureSkipVerify: true, // this connection only reads the certificate
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 {
				leaf = cs.PeerCertificates[0]
			}
			return nil
		},
	}
	db := openBridged(t, tg.dsn("encrypt=true"), mssqlbridge.WithTLSConfig(capture))
	require.NoError(t, selectOne(ctxFor(t, 30*time.Second), db))
	require.NotNil(t, leaf, "the server presented no certificate")
	return leaf
}
