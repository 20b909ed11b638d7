package tdstest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/prelogin"
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

func openDB(dsn string) (*sql.DB, error) { return sql.Open("sqlserver", dsn) }

// openMSSQL opens a go-mssqldb pool. It adds a connection timeout (a deadline on every socket
// Read and Write) so that a hang fails the test instead of stalling it: go-mssqldb does not watch
// the context while it connects.
func openMSSQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := openDB(dsn + sep + "connection+timeout=30")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestGoMSSQLDB(t *testing.T) {
	tests := map[string]struct {
		cfg    Config
		params []string
		mode   prelogin.Mode
		size   int
	}{
		"encrypt=true (full)":                    {Config{}, []string{"encrypt=true"}, prelogin.ModeFull, 4096},
		"encrypt=true, large chain":              {Config{Cert: CertLargeChain}, []string{"encrypt=true"}, prelogin.ModeFull, 4096},
		"encrypt=true, RSA":                      {Config{Cert: CertRSA2048}, []string{"encrypt=true"}, prelogin.ModeFull, 4096},
		"encrypt=false, server ON (full)":        {Config{}, []string{"encrypt=false"}, prelogin.ModeFull, 4096},
		"encrypt=false, server OFF (login-only)": {Config{Encryption: EncryptOff}, []string{"encrypt=false"}, prelogin.ModeLoginOnly, 4096},
		"encrypt=disable, server NOT_SUP":        {Config{Encryption: EncryptNotSup}, []string{"encrypt=disable"}, prelogin.ModeNone, 4096},
		"encrypt=disable, server OFF":            {Config{Encryption: EncryptOff}, []string{"encrypt=disable"}, prelogin.ModeNone, 4096},
		"encrypt=false, server NOT_SUP":          {Config{Encryption: EncryptNotSup}, []string{"encrypt=false"}, prelogin.ModeNone, 4096},
		"packet size 512, no TLS":                {Config{Encryption: EncryptNotSup}, []string{"encrypt=disable", "packet size=512"}, prelogin.ModeNone, 512},
		"encrypt=strict":                         {Config{Encryption: EncryptStrict}, []string{"encrypt=strict"}, prelogin.ModeStrict, 4096},
		"encrypt=strict, non-strict server":      {Config{}, []string{"encrypt=strict"}, prelogin.ModeStrict, 4096},
		"encrypt=strict, 16384":                  {Config{Encryption: EncryptStrict}, []string{"encrypt=strict", "packet size=16384"}, prelogin.ModeStrict, 16383},
		"packet size 16384 encrypted":            {Config{}, []string{"encrypt=true", "packet size=16384"}, prelogin.ModeFull, 16383},
		"packet size 32767 login-only":           {Config{Encryption: EncryptOff}, []string{"encrypt=false", "packet size=32767"}, prelogin.ModeLoginOnly, 32767},
		"record size 1024":                       {Config{RecordSize: 1024}, []string{"encrypt=true"}, prelogin.ModeFull, 4096},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, log := startServer(t, tc.cfg)
			params := append([]string{"certificate=" + s.CAFile(), "hostnameincertificate=localhost"}, tc.params...)
			db := openMSSQL(t, s.DSN(params...))
			checkQueries(t, db)
			_ = db.Close()
			log.wantMode(t, tc.mode.String(), tc.size)
		})
	}
}

func TestGoMSSQLDBValues(t *testing.T) {
	s, _ := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost", "packet size=16384"))
	ctx := context.Background()
	// 4 MB nvarchar(max): 2 Mi characters, streamed by the server.
	var big string
	if err := db.QueryRowContext(ctx, "SELECT REPLICATE(CAST(N'é' AS nvarchar(max)), 2097152)").Scan(&big); err != nil {
		t.Fatal(err)
	}
	if big != strings.Repeat("é", 2097152) {
		t.Fatalf("4 MB nvarchar(max): %d bytes", len(big))
	}
	var bin []byte
	if err := db.QueryRowContext(ctx, "SELECT CAST(REPLICATE(CAST('tds' AS varchar(max)), 349525) AS varbinary(max))").Scan(&bin); err != nil {
		t.Fatal(err)
	}
	if string(bin) != strings.Repeat("tds", 349525) {
		t.Fatalf("varbinary(max): %d bytes", len(bin))
	}
	var empty string
	if err := db.QueryRowContext(ctx, "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 0)").Scan(&empty); err != nil || empty != "" {
		t.Fatalf("empty nvarchar(max): %q, %v", empty, err)
	}
	var spid int
	var version, name string
	if err := db.QueryRowContext(ctx, "SELECT @@SPID, @@VERSION AS v, N'tdstest' AS name").Scan(&spid, &version, &name); err != nil {
		t.Fatal(err)
	}
	if spid < firstSPID || !strings.Contains(version, "tdstest") || name != "tdstest" {
		t.Fatalf("spid %d version %q name %q", spid, version, name)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET NOCOUNT ON; USE tempdb; BEGIN TRAN; COMMIT"); err != nil {
		t.Fatal(err)
	}
	var dbName string
	if err := conn.QueryRowContext(ctx, "SELECT DB_NAME()").Scan(&dbName); err != nil || dbName != "tempdb" {
		t.Fatalf("DB_NAME() after USE tempdb: %q, %v", dbName, err)
	}
	_ = conn.Close()
	_, err = db.ExecContext(ctx, "DROP TABLE t")
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != 50000 || !strings.Contains(me.Message, "DROP TABLE t") {
		t.Fatalf("unsupported statement: %v", err)
	}
	// Parameters make go-mssqldb use RPC (sp_executesql).
	var one int
	if err := db.QueryRowContext(ctx, "SELECT @p1", 1).Scan(&one); err != nil || one != 1 {
		t.Fatalf("RPC: %d, %v", one, err)
	}
	// Other procedures are refused with a clear error.
	_, err = db.ExecContext(ctx, "sp_who")
	if !errors.As(err, &me) || !strings.Contains(me.Message, "RPC sp_who is not supported") {
		t.Fatalf("RPC sp_who: %v", err)
	}
}

// TestGoMSSQLDBWrongPassword: login failed (18456) reaches go-mssqldb as an mssql.Error.
func TestGoMSSQLDBWrongPassword(t *testing.T) {
	s, _ := startServer(t, Config{Password: "right"})
	u := s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost")
	u = strings.Replace(u, ":right@", ":wrong@", 1)
	db := openMSSQL(t, u)
	err := db.Ping()
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != 18456 {
		t.Fatalf("err = %v, want 18456", err)
	}
}

// TestGoMSSQLDBCancel: cancelling a query in the middle of a 4 MB result makes go-mssqldb send
// ATTENTION; the server answers with DONE(attention) and the connection stays usable.
func TestGoMSSQLDBCancel(t *testing.T) {
	s, log := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 2097152)")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for rows.Next() {
	}
	_ = rows.Close()
	var one int
	if err := db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 after cancel: %d, %v", one, err)
	}
	if !strings.Contains(log.String(), "attention: answering DONE") {
		t.Error("the server saw no ATTENTION")
	}
}

// TestGoMSSQLDBWaitFor: WAITFOR DELAY waits and completes; cancelled, it ends with the context's
// error once the server acknowledged the ATTENTION, and the pool stays usable.
func TestGoMSSQLDBWaitFor(t *testing.T) {
	s, log := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(context.Background(), "WAITFOR DELAY '00:00:00.050'; SELECT 1"); err != nil {
		t.Fatalf("short WAITFOR: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := db.ExecContext(ctx, "WAITFOR DELAY '00:00:30'")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled WAITFOR: err = %v, want context.DeadlineExceeded", err)
	}
	// A bound that only a lost ATTENTION would reach, not a speed target.
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("cancelled WAITFOR took %v", d)
	}
	var one int
	if err := db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 after cancel: %d, %v", one, err)
	}
	if !strings.Contains(log.String(), "attention during WAITFOR") {
		t.Error("the server saw no ATTENTION during the WAITFOR")
	}
}

// TestGoMSSQLDBRefused: combinations the negotiation table (or strict mode) refuses fail cleanly.
func TestGoMSSQLDBRefused(t *testing.T) {
	tests := map[string]struct {
		cfg    Config
		params []string
	}{
		"encrypt=true, server NOT_SUP":   {Config{Encryption: EncryptNotSup}, []string{"encrypt=true"}},
		"encrypt=disable, server ON":     {Config{}, []string{"encrypt=disable"}},
		"encrypt=true, strict server":    {Config{Encryption: EncryptStrict}, []string{"encrypt=true"}},
		"encrypt=strict, NOT_SUP server": {Config{Encryption: EncryptNotSup}, []string{"encrypt=strict"}},
		"untrusted certificate":          {Config{}, []string{"encrypt=true"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, _ := startServer(t, tc.cfg)
			params := tc.params
			if name != "untrusted certificate" {
				params = append(params, "certificate="+s.CAFile(), "hostnameincertificate=localhost")
			}
			if err := queryWithDeadline(t, s.DSN(params...)); err == nil {
				t.Fatal("query succeeded")
			} else {
				t.Logf("client error: %v", err)
			}
		})
	}
}

// TestGoMSSQLDBTransactions: go-mssqldb's BeginTx/Commit/Rollback use transaction manager
// requests; SQL BEGIN TRAN/COMMIT change @@TRANCOUNT.
func TestGoMSSQLDBTransactions(t *testing.T) {
	s, _ := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	ctx := context.Background()
	for _, commit := range []bool{true, false} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT @@TRANCOUNT").Scan(&n); err != nil || n != 1 {
			t.Fatalf("@@TRANCOUNT in a transaction: %d, %v", n, err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatalf("commit %v: %v", commit, err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	for _, step := range []struct {
		sql  string
		want int
	}{{"BEGIN TRAN", 1}, {"COMMIT", 0}, {"BEGIN TRANSACTION", 1}, {"ROLLBACK", 0}} {
		if _, err := conn.ExecContext(ctx, step.sql); err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT @@TRANCOUNT").Scan(&n); err != nil || n != step.want {
			t.Fatalf("after %s: @@TRANCOUNT %d, %v", step.sql, n, err)
		}
	}
}

// TestGoMSSQLDBResetConnection: a pooled connection that go-mssqldb reuses is reset
// (RESETCONNECTION): USE and an open transaction do not leak into the next user.
func TestGoMSSQLDBResetConnection(t *testing.T) {
	s, _ := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "USE tempdb; BEGIN TRAN"); err != nil {
		t.Fatal(err)
	}
	var name string
	var n int
	if err := db.QueryRowContext(ctx, "SELECT DB_NAME(), @@TRANCOUNT").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	if name != "master" || n != 0 {
		t.Fatalf("after reset: database %q, @@TRANCOUNT %d", name, n)
	}
}

// resultSets runs a batch on conn and returns the first column of every row, per result set.
func resultSets(ctx context.Context, conn *sql.Conn, batch string) ([][]any, error) {
	rows, err := conn.QueryContext(ctx, batch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var sets [][]any
	for {
		var set []any
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			set = append(set, v)
		}
		sets = append(sets, set)
		if !rows.NextResultSet() {
			return sets, rows.Err()
		}
	}
}

// TestGoMSSQLDBBatchRunsInOrder: through go-mssqldb, a statement sees what the statements before
// it in the same batch did to the session, as with SQL Server.
func TestGoMSSQLDBBatchRunsInOrder(t *testing.T) {
	s, _ := startServer(t, Config{})
	db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, step := range []struct {
		batch string // run in this order on one connection
		want  string
	}{
		{"BEGIN TRAN; SELECT @@TRANCOUNT", "[[1]]"},
		{"BEGIN TRAN; SELECT @@TRANCOUNT; ROLLBACK; SELECT @@TRANCOUNT", "[[2] [0]]"},
		{"USE tempdb; SELECT DB_NAME()", "[[tempdb]]"},
		{"SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), CAST(3 AS bigint)); SELECT @@ROWCOUNT; " +
			"SET NOCOUNT OFF; SELECT @@ROWCOUNT", "[[1 2 3] [3] [0]]"},
		{"SELECT N'a' AS x; SELECT @@ROWCOUNT", "[[a] [1]]"},
	} {
		sets, err := resultSets(ctx, conn, step.batch)
		if err != nil {
			t.Fatalf("%s: %v", step.batch, err)
		}
		if got := fmt.Sprint(sets); got != step.want {
			t.Errorf("%s: %s, want %s", step.batch, got, step.want)
		}
	}
}
