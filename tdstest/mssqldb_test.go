package tdstest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// checkQueries runs SELECT 1 and the 1 MB nvarchar(max) on db and checks the values.
func checkQueries(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("SELECT 1: %v", err)
	}
	if one != 1 {
		t.Fatalf("SELECT 1 = %d", one)
	}
	var s string
	if err := db.QueryRowContext(ctx, "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 524288)").Scan(&s); err != nil {
		t.Fatalf("nvarchar(max): %v", err)
	}
	if len(s) != 524288 || strings.Trim(s, "x") != "" {
		t.Fatalf("nvarchar(max): %d characters, want 524288 x", len(s))
	}
}

func openMSSQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// logTo sends the server log to t.
func logTo(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) { t.Logf(format, args...) }
}

var _ = mssql.Error{}

func TestGoMSSQLDB(t *testing.T) {
	tests := map[string]struct {
		cfg    Config
		params []string
	}{
		"encrypt=true (full)":                    {Config{}, []string{"encrypt=true"}},
		"encrypt=true, large chain":              {Config{Cert: CertLargeChain}, []string{"encrypt=true"}},
		"encrypt=true, RSA":                      {Config{Cert: CertRSA2048}, []string{"encrypt=true"}},
		"encrypt=false, server ON (full)":        {Config{}, []string{"encrypt=false"}},
		"encrypt=false, server OFF (login-only)": {Config{EncryptionOff: true}, []string{"encrypt=false"}},
		"encrypt=disable, server NOT_SUP":        {Config{Encryption: 0x02}, []string{"encrypt=disable"}},
		"encrypt=disable, server OFF":            {Config{EncryptionOff: true}, []string{"encrypt=disable"}},
		"encrypt=strict":                         {Config{Strict: true}, []string{"encrypt=strict"}},
		"encrypt=strict, non-strict server":      {Config{}, []string{"encrypt=strict"}},
		"packet size 16384 encrypted":            {Config{}, []string{"encrypt=true", "packet size=16384"}},
		"packet size 32767 login-only":           {Config{EncryptionOff: true}, []string{"encrypt=false", "packet size=32767"}},
		"record size 1024":                       {Config{RecordSize: 1024}, []string{"encrypt=true"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Logf = logTo(t)
			s, err := NewServer(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			params := append([]string{"certificate=" + s.CAFile(), "hostnameincertificate=localhost"}, tc.params...)
			db := openMSSQL(t, s.DSN(params...))
			checkQueries(t, db)
			_ = db.Close()
		})
	}
}
