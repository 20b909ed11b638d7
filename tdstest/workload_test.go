package tdstest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
)

// workloadMode is one way go-mssqldb reaches the server: its own TLS or bridged through
// mssqlbridge, in one encryption mode.
type workloadMode struct {
	Mode
	bridged bool
}

// workloadModes are every Mode, first with go-mssqldb's own TLS, then bridged.
var workloadModes = func() []workloadMode {
	var out []workloadMode
	for _, bridged := range []bool{false, true} {
		for _, m := range Modes() {
			out = append(out, workloadMode{m, bridged})
		}
	}
	return out
}()

// name names the mode in test names, e.g. "bridged login-only".
func (m workloadMode) name() string {
	if m.bridged {
		return "bridged " + m.Name
	}
	return "native " + m.Name
}

// openWorkloadDB starts a server for m and returns a pool connected to it.
func openWorkloadDB(t *testing.T, m workloadMode) (*sql.DB, *recordingLog) {
	t.Helper()
	s, log := startServer(t, m.Config)
	dsn := s.DSN("encrypt="+m.Encrypt, "certificate="+s.CAFile(), "hostnameincertificate=localhost")
	if !m.bridged {
		return openMSSQL(t, dsn), log
	}
	c, err := mssqlbridge.NewConnector(dsn + "&connection+timeout=30")
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

// TestGoMSSQLDBWorkloads runs every statement of the contract in doc.go through go-mssqldb, with
// its own TLS and bridged, in every encryption mode.
func TestGoMSSQLDBWorkloads(t *testing.T) {
	for _, m := range workloadModes {
		t.Run(m.name(), func(t *testing.T) {
			db, log := openWorkloadDB(t, m)
			t.Run("params", func(t *testing.T) { checkParams(t, db) })
			t.Run("series", func(t *testing.T) { checkSeries(t, db) })
			t.Run("wide", func(t *testing.T) { checkWide(t, db, 1000) })
			t.Run("datalength", func(t *testing.T) { checkDataLength(t, db) })
			t.Run("nocount", func(t *testing.T) { checkNoCount(t, db) })
			t.Run("bulk", func(t *testing.T) { checkBulk(t, db) })
			t.Run("transactions", func(t *testing.T) { checkWorkloadTransactions(t, db) })
			_ = db.Close()
			log.wantMode(t, m.Name, 4096)
		})
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// paramCase is a go-mssqldb argument, the column type it must come back as, and a check of the
// value scanned into any.
type paramCase struct {
	name   string
	arg    any
	dbType string
	check  func(got any) bool
}

func paramCases(t *testing.T) []paramCase {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234500, time.FixedZone("", -(7*3600+30*60)))
	var date mssql.NullDate
	var dt2 mssql.NullDateTime
	var tod mssql.NullTime
	for _, s := range []sql.Scanner{&date, &dt2, &tod} {
		if err := s.Scan(at); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("ab€", 5000) // nvarchar(max): more than 4000 characters
	blob := bytes.Repeat([]byte{0, 1, 2, 0xFF}, 3000)
	guid := mssql.UniqueIdentifier{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	isNil := func(got any) bool { return got == nil }
	timeIs := func(want time.Time) func(any) bool {
		return func(got any) bool { g, ok := got.(time.Time); return ok && g.Equal(want) }
	}
	return []paramCase{
		{"bool", true, "BIT", func(g any) bool { return g == true }},
		{"int64", int64(-1 << 40), "BIGINT", func(g any) bool { return g == int64(-1<<40) }},
		{"int64 max", int64(math.MaxInt64), "BIGINT", func(g any) bool { return g == int64(math.MaxInt64) }},
		{"NullInt32", sql.NullInt32{Int32: -7, Valid: true}, "INT", func(g any) bool { return g == int64(-7) }},
		{"NullInt16", sql.NullInt16{Int16: 300, Valid: true}, "SMALLINT", func(g any) bool { return g == int64(300) }},
		{"NullByte", sql.NullByte{Byte: 250, Valid: true}, "TINYINT", func(g any) bool { return g == int64(250) }},
		{"float64", math.Pi, "FLOAT", func(g any) bool { return g == math.Pi }},
		{"float32", float32(1.25), "REAL", func(g any) bool { return g == float64(1.25) }},
		{"string", "héllo, wörld", "NVARCHAR", func(g any) bool { return g == "héllo, wörld" }},
		{"nvarchar(max)", big, "NVARCHAR", func(g any) bool { return g == big }},
		{"VarChar", mssql.VarChar("plain"), "VARCHAR", func(g any) bool { return g == "plain" }},
		{"VarCharMax", mssql.VarCharMax("max text"), "VARCHAR", func(g any) bool { return g == "max text" }},
		{"bytes", []byte{0, 1, 0xFE}, "VARBINARY", func(g any) bool { return bytes.Equal(g.([]byte), []byte{0, 1, 0xFE}) }},
		{"varbinary(max)", blob, "VARBINARY", func(g any) bool { return bytes.Equal(g.([]byte), blob) }},
		{"empty bytes", []byte{}, "VARBINARY", func(g any) bool { b, ok := g.([]byte); return ok && len(b) == 0 }},
		{"time.Time (datetimeoffset)", at, "DATETIMEOFFSET", timeIs(at)},
		{"DateTime1", mssql.DateTime1(at.UTC().Truncate(time.Second)), "DATETIME", timeIs(at.UTC().Truncate(time.Second))},
		{"date", date, "DATE", timeIs(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC))},
		{"datetime2", dt2, "DATETIME2", timeIs(time.Date(2026, 3, 4, 5, 6, 7, 891234500, time.UTC))},
		{"time", tod, "TIME", func(g any) bool {
			gt, ok := g.(time.Time)
			return ok && gt.Hour() == 5 && gt.Minute() == 6 && gt.Second() == 7 && gt.Nanosecond() == 891234500
		}},
		{"uniqueidentifier", guid, "UNIQUEIDENTIFIER", func(g any) bool {
			var u mssql.UniqueIdentifier
			return u.Scan(g) == nil && u == guid
		}},
		{"nil", nil, "NVARCHAR", isNil},
		{"NullInt64", sql.NullInt64{}, "BIGINT", isNil},
		{"NullString", sql.NullString{}, "NVARCHAR", isNil},
		{"NullBool", sql.NullBool{}, "BIT", isNil},
		{"NullFloat64", sql.NullFloat64{}, "FLOAT", isNil},
		{"NullDate", mssql.NullDate{}, "DATE", isNil},
		{"NullDateTime", mssql.NullDateTime{}, "DATETIME2", isNil},
		{"NullTime", mssql.NullTime{}, "TIME", isNil},
	}
}

// checkParams sends every case as one SELECT @p1, ..., @pN and checks types and values.
func checkParams(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	cases := paramCases(t)
	var sel []string
	args := make([]any, len(cases))
	for i, c := range cases {
		sel = append(sel, fmt.Sprintf("@p%d", i+1))
		args[i] = c.arg
	}
	rows, err := db.QueryContext(ctx, "SELECT "+strings.Join(sel, ", "), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	got := make([]any, len(cases))
	ptrs := make([]any, len(cases))
	for i := range got {
		ptrs[i] = &got[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if types[i].DatabaseTypeName() != c.dbType {
			t.Errorf("%s: column type %s, want %s", c.name, types[i].DatabaseTypeName(), c.dbType)
		}
		if types[i].Name() != "" {
			t.Errorf("%s: column name %q, want empty", c.name, types[i].Name())
		}
		if !c.check(got[i]) {
			t.Errorf("%s: got %T %.100v", c.name, got[i], got[i])
		}
	}
	if rows.Next() {
		t.Error("more than one row")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Unnamed references: an undeclared variable is SQL Server's error 137.
	var me mssql.Error
	err = db.QueryRowContext(ctx, "SELECT @nope", 1).Scan(new(any))
	if !errors.As(err, &me) || me.Number != 137 {
		t.Errorf("undeclared variable: %v, want error 137", err)
	}
}

// checkSeries runs the narrow GENERATE_SERIES query and its refusals.
func checkSeries(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	for _, n := range []int64{1, 3, 100_000} {
		rows, err := db.QueryContext(ctx, SeriesQuery, n)
		if err != nil {
			t.Fatal(err)
		}
		types, _ := rows.ColumnTypes()
		if len(types) != 1 || types[0].Name() != "value" || types[0].DatabaseTypeName() != "BIGINT" {
			t.Fatalf("columns %v", types)
		}
		var want int64 = 1
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v != want {
				t.Fatalf("row %d: value %d", want, v)
			}
			want++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		_ = rows.Close()
		if want-1 != n {
			t.Fatalf("n=%d: %d rows", n, want-1)
		}
	}
	// A stop below the start counts down, as SQL Server does without a step.
	var down []int64
	rows, err := db.QueryContext(ctx, SeriesQuery, int64(-1))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int64
		_ = rows.Scan(&v)
		down = append(down, v)
	}
	_ = rows.Close()
	if fmt.Sprint(down) != "[1 0 -1]" {
		t.Errorf("GENERATE_SERIES(1, -1) = %v", down)
	}
	var me mssql.Error
	_, err = db.ExecContext(ctx, SeriesQuery, sql.NullInt32{Int32: 5, Valid: true})
	if !errors.As(err, &me) || me.Number != 5373 || !strings.Contains(me.Message, "same type") {
		t.Errorf("int stop: %v, want error 5373", err)
	}
	_, err = db.ExecContext(ctx, SeriesQuery, int64(maxSeriesRows+1))
	if !errors.As(err, &me) || me.Number != 50000 || !strings.Contains(me.Message, "10000000") {
		t.Errorf("too many rows: %v", err)
	}
	// In a batch, with literals.
	var n int
	rows, err = db.QueryContext(ctx, "select VALUE from generate_series(cast(1 as BIGINT), CAST(5 AS bigint))")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		n++
	}
	_ = rows.Close()
	if n != 5 {
		t.Errorf("batch series: %d rows", n)
	}
	_, err = db.ExecContext(ctx, "SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), 5)")
	if !errors.As(err, &me) || me.Number != 5373 {
		t.Errorf("bigint and int literal: %v, want 5373", err)
	}
}

// checkWide runs WideRowsQuery for n rows and checks every value.
func checkWide(t *testing.T, db *sql.DB, n int64) {
	ctx := testContext(t)
	rows, err := db.QueryContext(ctx, WideRowsQuery, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, ct := range types {
		nullable, _ := ct.Nullable()
		s := ct.Name() + " " + ct.DatabaseTypeName()
		if l, ok := ct.Length(); ok {
			s += fmt.Sprintf("(%d)", l)
		}
		if p, sc, ok := ct.DecimalSize(); ok {
			s += fmt.Sprintf("(%d,%d)", p, sc)
		}
		desc = append(desc, fmt.Sprintf("%s null=%v", s, nullable))
	}
	want := "[id INT null=true name NVARCHAR(50) null=true ts DATETIME2(0,7) null=true amount DECIMAL(18,4) null=true flag BIT null=true]"
	if fmt.Sprint(desc) != want {
		t.Errorf("columns %v\nwant    %s", desc, want)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var i int64
	for rows.Next() {
		i++
		var id int32
		var name, amount string
		var ts time.Time
		var flag bool
		if err := rows.Scan(&id, &name, &ts, &amount, &flag); err != nil {
			t.Fatal(err)
		}
		wantAmount := fmt.Sprintf("%d.%04d", i/4, i%4*2500)
		if int64(id) != i || name != fmt.Sprintf("name-%d", i) || !ts.Equal(base.Add(time.Duration(i)*time.Second)) ||
			amount != wantAmount || flag != (i%2 == 1) {
			t.Fatalf("row %d: %d %q %v %s %v", i, id, name, ts, amount, flag)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("%d rows, want %d", i, n)
	}
}

// checkDataLength runs SELECT DATALENGTH(@p1) for a (max) upload, a short value and NULL.
func checkDataLength(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	tests := []struct {
		arg    any
		want   sql.NullInt64
		dbType string
	}{
		{bytes.Repeat([]byte{7}, 1<<20), sql.NullInt64{Int64: 1 << 20, Valid: true}, "BIGINT"},
		{strings.Repeat("é", 1<<19), sql.NullInt64{Int64: 1 << 20, Valid: true}, "BIGINT"},
		{"abc", sql.NullInt64{Int64: 6, Valid: true}, "INT"},
		{int64(5), sql.NullInt64{Int64: 8, Valid: true}, "INT"},
		{nil, sql.NullInt64{}, "INT"},
	}
	for _, tc := range tests {
		rows, err := db.QueryContext(ctx, "SELECT DATALENGTH(@p1)", tc.arg)
		if err != nil {
			t.Fatal(err)
		}
		types, _ := rows.ColumnTypes()
		var got sql.NullInt64
		if !rows.Next() {
			t.Fatal("no row")
		}
		if err := rows.Scan(&got); err != nil {
			t.Fatal(err)
		}
		_ = rows.Close()
		if got != tc.want || types[0].DatabaseTypeName() != tc.dbType {
			t.Errorf("DATALENGTH(%T): %v %s, want %v %s", tc.arg, got, types[0].DatabaseTypeName(), tc.want, tc.dbType)
		}
	}
}

// checkNoCount: SET NOCOUNT ON/OFF, as a batch and through sp_executesql, drops and restores the
// row count of later statements.
func checkNoCount(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	affected := func() int64 {
		t.Helper()
		res, err := conn.ExecContext(ctx, SeriesQuery, int64(5))
		if err != nil {
			t.Fatal(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := affected(); n != 5 {
		t.Fatalf("rows affected %d, want 5", n)
	}
	for _, step := range []struct {
		sql  string
		args []any
		want int64
	}{
		{"SET NOCOUNT ON", nil, 0},
		{"SET NOCOUNT OFF", nil, 5},
		{"SET NOCOUNT ON", []any{1}, 0}, // sp_executesql (go-mssqldb uses RPC when there are arguments)
		{"set nocount off", []any{1}, 5},
	} {
		if _, err := conn.ExecContext(ctx, step.sql, step.args...); err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		if n := affected(); n != step.want {
			t.Errorf("after %s (%d args): rows affected %d, want %d", step.sql, len(step.args), n, step.want)
		}
	}
}

// createBulkTable is the table of the bulk load contract.
const createBulkTable = "CREATE TABLE #t (id int NOT NULL, name nvarchar(50) NULL, ts datetime2(7) NULL, amount decimal(18,4) NULL, flag bit NULL)"

// copyRows loads rows 1..n (every third with NULLs) into #t through CopyIn on q.
func copyRows(ctx context.Context, q interface {
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}, n int, bad bool) (int64, error) {
	stmt, err := q.PrepareContext(ctx, mssql.CopyIn("#t", mssql.BulkOptions{}, "id", "name", "ts", "amount", "flag"))
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		var err error
		switch {
		case bad && i == n:
			// 51 characters in nvarchar(50): go-mssqldb sends them, the server must refuse.
			_, err = stmt.ExecContext(ctx, i, strings.Repeat("n", 51), base, "1", true)
		case i%3 == 0:
			_, err = stmt.ExecContext(ctx, i, nil, nil, nil, nil)
		default:
			_, err = stmt.ExecContext(ctx, i, fmt.Sprintf("name-%d", i), base.Add(time.Duration(i)*time.Second), fmt.Sprintf("%d.25", i), i%2 == 1)
		}
		if err != nil {
			return 0, err
		}
	}
	res, err := stmt.ExecContext(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// checkCounts checks SELECT COUNT(*) and the checksum query over #t.
func checkCounts(t *testing.T, ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, rows int64) {
	t.Helper()
	var count int32
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM #t").Scan(&count); err != nil || int64(count) != rows {
		t.Fatalf("COUNT(*) = %d, %v; want %d", count, err, rows)
	}
	var big int64
	var sum sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM #t").Scan(&big, &sum); err != nil {
		t.Fatal(err)
	}
	wantSum := sql.NullInt64{Int64: rows * (rows + 1) / 2, Valid: rows > 0}
	if big != rows || sum != wantSum {
		t.Fatalf("COUNT_BIG, SUM = %d, %v; want %d, %v", big, sum, rows, wantSum)
	}
}

// checkBulk loads rows with CopyIn and checks the counts, a refused bad row and DROP TABLE.
func checkBulk(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, createBulkTable); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ctx, conn, 0)
	n, err := copyRows(ctx, conn, 100_000, false)
	if err != nil || n != 100_000 {
		t.Fatalf("CopyIn: %d rows, %v", n, err)
	}
	checkCounts(t, ctx, conn, 100_000)
	_, err = copyRows(ctx, conn, 10, true)
	var me mssql.Error
	if !errors.As(err, &me) || !strings.Contains(me.Message, "row 10 column name") || !strings.Contains(me.Message, "exceeds the declared 100") {
		t.Fatalf("CopyIn with a name too long: %v", err)
	}
	checkCounts(t, ctx, conn, 100_000) // the failed load added nothing
	if _, err := conn.ExecContext(ctx, "DROP TABLE #t"); err != nil {
		t.Fatal(err)
	}
	err = conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM #t").Scan(new(int))
	if !errors.As(err, &me) || me.Number != 208 {
		t.Fatalf("COUNT after DROP: %v, want error 208", err)
	}
}

// checkWorkloadTransactions: parameterized statements and a CopyIn inside transactions begun
// with BeginTx (transaction manager requests) and with T-SQL.
func checkWorkloadTransactions(t *testing.T, db *sql.DB) {
	ctx := testContext(t)
	for _, commit := range []bool{true, false} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n, tc int64
		if err := tx.QueryRowContext(ctx, "SELECT @p1, @@TRANCOUNT", int64(42)).Scan(&n, &tc); err != nil || n != 42 || tc != 1 {
			t.Fatalf("RPC in a transaction: %d %d %v", n, tc, err)
		}
		if _, err := tx.ExecContext(ctx, createBulkTable); err != nil {
			t.Fatal(err)
		}
		if got, err := copyRows(ctx, tx, 50, false); err != nil || got != 50 {
			t.Fatalf("CopyIn in a transaction: %d, %v", got, err)
		}
		checkCounts(t, ctx, tx, 50)
		if _, err := tx.ExecContext(ctx, "DROP TABLE #t"); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatalf("commit=%v: %v", commit, err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
			t.Fatal(err)
		}
		var n, tc int64
		if err := conn.QueryRowContext(ctx, "SELECT @p1, @@TRANCOUNT", int64(7)).Scan(&n, &tc); err != nil || n != 7 || tc != 1 {
			t.Fatalf("RPC after BEGIN TRANSACTION: %d %d %v", n, tc, err)
		}
		if _, err := conn.ExecContext(ctx, end); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT @@TRANCOUNT").Scan(&tc); err != nil || tc != 0 {
			t.Fatalf("after %s: @@TRANCOUNT %d %v", end, tc, err)
		}
	}
}

// TestGoMSSQLDBBulkTypes: a temporary table of every column type of the contract, loaded with
// CopyIn (values and NULLs), counted and summed.
func TestGoMSSQLDBBulkTypes(t *testing.T) {
	db, _ := openWorkloadDB(t, workloadModes[2]) // native, encrypt=true
	ctx := testContext(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cols := []string{"bi", "b", "ti", "si", "i", "f", "r", "n", "v", "nv", "nvm", "vb", "vbm", "d", "tm", "dt2", "dto", "g"}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE #all (bi bigint NOT NULL, b bit, ti tinyint, si smallint, i int, f float, r real, "+
		"n numeric(10,2), v varchar(20), nv nvarchar(20), nvm nvarchar(max), vb varbinary(16), vbm varbinary(max), d date, "+
		"tm time(7), dt2 datetime2(3), dto datetimeoffset(7), g uniqueidentifier)"); err != nil {
		t.Fatal(err)
	}
	stmt, err := conn.PrepareContext(ctx, mssql.CopyIn("#all", mssql.BulkOptions{}, cols...))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456700, time.FixedZone("", 3600))
	const rows = 300
	for i := 1; i <= rows; i++ {
		vals := []any{int64(i), i%2 == 0, int64(i % 256), int64(-i), int64(i * 1000), float64(i) / 3, float64(i) / 8,
			fmt.Sprintf("%d.%02d", i, i%100), "v" + fmt.Sprint(i), "ñ" + fmt.Sprint(i), strings.Repeat("m", 5000+i),
			[]byte{byte(i), 1}, bytes.Repeat([]byte{byte(i)}, 9000), at, at, at, at,
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)}}
		if i%4 == 0 {
			for k := 1; k < len(vals); k++ {
				vals[k] = nil
			}
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	res, err := stmt.ExecContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != rows {
		t.Fatalf("CopyIn: %d rows", n)
	}
	_ = stmt.Close()
	var count, sum int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT_BIG(*), SUM(CAST(bi AS bigint)) FROM #all").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != rows || sum != rows*(rows+1)/2 {
		t.Fatalf("COUNT_BIG, SUM = %d, %d", count, sum)
	}
}

// TestTableStatementErrors: the run-time checks of the temporary table statements answer with
// SQL Server's error numbers (or 50000 with a clear message) and the connection stays usable.
func TestTableStatementErrors(t *testing.T) {
	db, _ := openWorkloadDB(t, workloadModes[0]) // native, no encryption
	ctx := testContext(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, createBulkTable); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sql    string
		number int32
		text   string
	}{
		{createBulkTable, 2714, "already an object named '#t'"},
		{"DROP TABLE #nope", 3701, "Cannot drop the table '#nope'"},
		{"SELECT COUNT(*) FROM #nope", 208, "Invalid object name '#nope'"},
		{"INSERT BULK #t (nope int)", 207, "Invalid column name 'nope'"},
		{"INSERT BULK #t (id bigint)", 50000, "declares column id as bigint, table #t has int"},
		{"SELECT * FROM #t", 50000, "SET FMTONLY ON"},
		{"SELECT COUNT_BIG(*), SUM(CAST(flag AS bigint)) FROM #t", 50000, "first column"},
		{"CREATE TABLE #t2 (id int); SELECT COUNT(*) FROM #nope; DROP TABLE #t2", 208, "#nope"},
	}
	for _, tc := range tests {
		_, err := conn.ExecContext(ctx, tc.sql)
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != tc.number || !strings.Contains(me.Message, tc.text) {
			t.Errorf("%s: %v, want error %d %q", tc.sql, err, tc.number, tc.text)
		}
	}
	// The failed batch ran its first statement and stopped at the error, as SQL Server does.
	if _, err := conn.ExecContext(ctx, "DROP TABLE #t2"); err != nil {
		t.Errorf("DROP TABLE #t2 after the failed batch: %v", err)
	}
	checkCounts(t, ctx, conn, 0)
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS #nope; DROP TABLE #t"); err != nil {
		t.Fatal(err)
	}
}

// TestGoMSSQLDBCancelRPC: cancelling an sp_executesql call (WAITFOR DELAY inside it) ends with
// the context's error once the server acknowledged the ATTENTION, and the connection stays usable.
func TestGoMSSQLDBCancelRPC(t *testing.T) {
	db, log := openWorkloadDB(t, workloadModes[2])
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := db.ExecContext(ctx, "WAITFOR DELAY '00:00:30'", int64(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled RPC: %v, want context.DeadlineExceeded", err)
	}
	var n int64
	if err := db.QueryRowContext(testContext(t), "SELECT @p1", int64(5)).Scan(&n); err != nil || n != 5 {
		t.Fatalf("RPC after the cancel: %d, %v", n, err)
	}
	if !strings.Contains(log.String(), "attention during WAITFOR") {
		t.Error("the server saw no ATTENTION during the WAITFOR")
	}
}
