package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// Statements of the workload cells. SQL Server 2022 runs each of them the same way as tdstest
// (see tdstest/doc.go for what tdstest understands), so -dsn measures identical work.
const (
	stmtParams   = "SELECT @p1, @p2"
	stmtNoCount  = "SET NOCOUNT ON"
	stmtCountOn  = "SET NOCOUNT OFF"
	stmtNarrow   = "SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)"
	stmtWide     = "SELECT CAST(value AS int) AS id, CAST(CONCAT(N'name-', value) AS nvarchar(50)) AS name, DATEADD(SECOND, CAST(value AS int), CAST('2026-01-01T00:00:00' AS datetime2(7))) AS ts, CAST(value / 4.0 AS decimal(18,4)) AS amount, CAST(value % 2 AS bit) AS flag FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)"
	stmtLength   = "SELECT DATALENGTH(@p1)"
	stmtCreate   = "CREATE TABLE #t (id int NOT NULL, name nvarchar(50) NULL, ts datetime2(7) NULL, amount decimal(18,4) NULL, flag bit NULL)"
	stmtChecksum = "SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM #t"
	stmtDrop     = "DROP TABLE #t"
)

// wideBase is the ts of the wide row 0: row i has ts = wideBase + i seconds.
var wideBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// paramText is the short string of the parameter round trip.
const paramText = "tdsbridge"

// Directions a workload's bytes are counted in: what it receives (results) or sends (uploads).
type direction uint8

const (
	dirReceived direction = iota // bytes the client reads
	dirSent                      // bytes the client writes
	dirBoth                      // both (round trips)
)

// String names the direction as the table prints it.
func (d direction) String() string {
	switch d {
	case dirReceived:
		return "received"
	case dirSent:
		return "sent"
	case dirBoth:
		return "sent+received"
	default:
		return fmt.Sprintf("direction(%d)", uint8(d))
	}
}

// workload is one application-shaped driver cell: what one operation does on a pinned
// connection. Every operation checks its answer and fails with an error naming what was wrong.
type workload struct {
	name      string    // cell name
	what      string    // one line for the table
	roundTrip bool      // a query moves a packet or two each way (the target is "not worse")
	heavy     bool      // an operation takes 0.2 s or more: the cell runs the first half of the rounds, unprimed
	latency   bool      // record each operation's wall time (p50/p99)
	unit      string    // what the per-unit CPU column counts
	perOp     int64     // units per operation
	dir       direction // which bytes count as the operation's MiB
	// newOp returns one operation on bc; state that lives across calls (counters, buffers)
	// lives in the closure.
	newOp func(bc *benchConn) func(ctx context.Context) error
}

// workloads returns the workload cells for rows rows per many-row query and CopyIn, and a
// parameter of size bytes.
func workloads(rows int64, size int) []workload {
	return []workload{
		{name: "round trip SELECT @p1, @p2", what: stmtParams + " (bigint, nvarchar)", roundTrip: true, latency: true,
			unit: "query", perOp: 1, dir: dirBoth, newOp: paramsOp},
		{name: "round trip SET NOCOUNT ON", what: stmtNoCount + " (Exec, no parameters)", roundTrip: true, latency: true,
			unit: "query", perOp: 1, dir: dirBoth, newOp: noCountOp},
		{name: fmt.Sprintf("narrow rows x%d", rows), what: stmtNarrow, unit: "row", perOp: rows, dir: dirReceived,
			newOp: func(bc *benchConn) func(context.Context) error { return narrowOp(bc, rows) }},
		{name: fmt.Sprintf("wide rows x%d", rows), heavy: true, what: "int, nvarchar(50), datetime2(7), decimal(18,4), bit from GENERATE_SERIES", unit: "row", perOp: rows, dir: dirReceived,
			newOp: func(bc *benchConn) func(context.Context) error { return wideOp(bc, rows) }},
		{name: fmt.Sprintf("upload %s varbinary(max) parameter", report.ByteLabel(size)), what: stmtLength, unit: "query", perOp: 1, dir: dirSent,
			newOp: func(bc *benchConn) func(context.Context) error { return uploadOp(bc, size) }},
		{name: fmt.Sprintf("CopyIn x%d rows", rows), heavy: true, what: "CREATE TABLE #t, CopyIn in a transaction, checksum, DROP", unit: "row", perOp: rows, dir: dirSent,
			newOp: func(bc *benchConn) func(context.Context) error { return copyInOp(bc, rows) }},
	}
}

// paramsOp runs SELECT @p1, @p2 with a new bigint each call and a short string, and checks that
// both come back as sent.
func paramsOp(bc *benchConn) func(context.Context) error {
	var n int64
	var gotText sql.RawBytes
	return func(ctx context.Context) error {
		n++
		rows, err := bc.conn.QueryContext(ctx, stmtParams, n, paramText)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		defer rows.Close()
		if !rows.Next() {
			return noRow(rows)
		}
		var got int64
		if err := rows.Scan(&got, &gotText); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if got != n || string(gotText) != paramText {
			return fmt.Errorf("wrong answer: got (%d, %q), sent (%d, %q)", got, gotText, n, paramText)
		}
		return closeRows(rows, 1)
	}
}

// noCountOp runs SET NOCOUNT ON as an Exec without parameters.
func noCountOp(bc *benchConn) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := bc.conn.ExecContext(ctx, stmtNoCount); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		return nil
	}
}

// narrowOp reads rows bigint rows and checks that they are 1..rows in order.
func narrowOp(bc *benchConn, rows int64) func(context.Context) error {
	return func(ctx context.Context) error {
		rs, err := bc.conn.QueryContext(ctx, stmtNarrow, rows)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		defer rs.Close()
		var i, v int64
		for rs.Next() {
			i++
			if err := rs.Scan(&v); err != nil {
				return fmt.Errorf("row %d: scan: %w", i, err)
			}
			if v != i {
				return fmt.Errorf("row %d: wrong value %d", i, v)
			}
		}
		return closeRows(rs, i, rows)
	}
}

// wideOp reads rows wide rows and checks every column of every row against the values the
// statement computes: id i, name "name-i", ts wideBase + i s, amount i/4 with four decimals,
// flag i%2 == 1.
func wideOp(bc *benchConn, rows int64) func(context.Context) error {
	var name, amount sql.RawBytes
	var want []byte
	return func(ctx context.Context) error {
		rs, err := bc.conn.QueryContext(ctx, stmtWide, rows)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		defer rs.Close()
		var i, id int64
		var ts time.Time
		var flag bool
		for rs.Next() {
			i++
			if err := rs.Scan(&id, &name, &ts, &amount, &flag); err != nil {
				return fmt.Errorf("row %d: scan: %w", i, err)
			}
			want = strconv.AppendInt(append(want[:0], "name-"...), i, 10)
			if id != i || !bytes.Equal(name, want) || !ts.Equal(wideBase.Add(time.Duration(i)*time.Second)) || flag != (i%2 == 1) {
				return fmt.Errorf("row %d: wrong values (%d, %q, %s, %s, %t)", i, id, name, ts, amount, flag)
			}
			want = appendQuarter(want[:0], i)
			if !bytes.Equal(amount, want) {
				return fmt.Errorf("row %d: amount %q, want %q", i, amount, want)
			}
		}
		return closeRows(rs, i, rows)
	}
}

// appendQuarter appends i/4 with four decimals, as decimal(18,4) prints it: 1 -> "0.2500".
func appendQuarter(dst []byte, i int64) []byte {
	dst = strconv.AppendInt(dst, i/4, 10)
	return append(dst, [4]string{".0000", ".2500", ".5000", ".7500"}[i%4]...)
}

// uploadOp sends a varbinary(max) parameter of size bytes and checks that the server counted
// them.
func uploadOp(bc *benchConn, size int) func(context.Context) error {
	payload := bytes.Repeat([]byte{0xA5}, size)
	return func(ctx context.Context) error {
		var n int64
		if err := bc.conn.QueryRowContext(ctx, stmtLength, payload).Scan(&n); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		if n != int64(size) {
			return fmt.Errorf("wrong answer: DATALENGTH %d, sent %d bytes", n, size)
		}
		return nil
	}
}

// copyInOp sets NOCOUNT OFF, creates #t, loads rows rows into it with mssql.CopyIn inside a transaction, checks
// the row count the load reports and the server's count and id sum, and drops #t.
func copyInOp(bc *benchConn, rows int64) func(context.Context) error {
	names := make([]string, rows)
	for i := range names {
		names[i] = "name-" + strconv.Itoa(i+1)
	}
	return func(ctx context.Context) error {
		// The round-trip cell leaves NOCOUNT ON on the shared connection; the row count CopyIn
		// reports comes from the server's DONE token, which NOCOUNT ON may leave without one.
		if _, err := bc.conn.ExecContext(ctx, stmtCountOn); err != nil {
			return fmt.Errorf("%s: %w", stmtCountOn, err)
		}
		if _, err := bc.conn.ExecContext(ctx, stmtCreate); err != nil {
			return fmt.Errorf("create #t: %w", err)
		}
		loadErr := loadRows(ctx, bc, names)
		var count, sum sql.NullInt64
		if loadErr == nil {
			if err := bc.conn.QueryRowContext(ctx, stmtChecksum).Scan(&count, &sum); err != nil {
				loadErr = fmt.Errorf("checksum: %w", err)
			} else if want := rows * (rows + 1) / 2; count.Int64 != rows || sum.Int64 != want {
				loadErr = fmt.Errorf("wrong answer: #t holds %d rows with id sum %d, want %d and %d", count.Int64, sum.Int64, rows, want)
			}
		}
		if _, err := bc.conn.ExecContext(ctx, stmtDrop); err != nil && loadErr == nil {
			loadErr = fmt.Errorf("drop #t: %w", err)
		}
		return loadErr
	}
}

// loadRows copies one row per name into #t in a transaction: id i+1, names[i], ts, amount,
// flag as the wide rows have them.
func loadRows(ctx context.Context, bc *benchConn, names []string) (err error) {
	tx, err := bc.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx, mssql.CopyIn("#t", mssql.BulkOptions{}, "id", "name", "ts", "amount", "flag"))
	if err != nil {
		return fmt.Errorf("prepare CopyIn: %w", err)
	}
	defer stmt.Close()
	for i, name := range names {
		id := int64(i + 1)
		if _, err := stmt.ExecContext(ctx, id, name, wideBase.Add(time.Duration(id)*time.Second), float64(id)/4, id%2 == 1); err != nil {
			return fmt.Errorf("CopyIn row %d: %w", id, err)
		}
	}
	res, err := stmt.ExecContext(ctx)
	if err != nil {
		return fmt.Errorf("CopyIn: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(names)) {
		return fmt.Errorf("CopyIn: %d rows copied (%v), sent %d", n, err, len(names))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// noRow reports a query that returned no row.
func noRow(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return fmt.Errorf("wrong answer: no row")
}

// closeRows checks that the result set ended cleanly after got rows (want, when given, is the
// count expected) and closes it.
func closeRows(rows *sql.Rows, got int64, want ...int64) error {
	if err := rows.Err(); err != nil {
		return fmt.Errorf("after row %d: %w", got, err)
	}
	if len(want) > 0 && got != want[0] {
		return fmt.Errorf("wrong answer: %d rows, want %d", got, want[0])
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("close rows: %w", err)
	}
	return nil
}
