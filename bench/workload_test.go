package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeAnswer answers one query of the fake driver: column names and rows.
type fakeAnswer func(query string, args []driver.NamedValue) ([]string, [][]driver.Value, error)

// fakeConnector is a database/sql driver whose queries are answered by a function, so that a
// test can hand the workload operations right and wrong answers. CopyIn statements count the
// rows they get and report that count when executed without arguments.
type fakeConnector struct{ answer fakeAnswer }

func (c *fakeConnector) Connect(context.Context) (driver.Conn, error) { return &fakeConn{c: c}, nil }
func (c *fakeConnector) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("fake: use the connector")
}

type fakeConn struct{ c *fakeConnector }

func (fc *fakeConn) Prepare(query string) (driver.Stmt, error) {
	return &fakeStmt{fc: fc, query: query}, nil
}
func (fc *fakeConn) Close() error              { return nil }
func (fc *fakeConn) Begin() (driver.Tx, error) { return fakeTx{}, nil }

func (fc *fakeConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cols, rows, err := fc.c.answer(query, args)
	if err != nil {
		return nil, err
	}
	return &fakeRows{cols: cols, rows: rows}, nil
}

func (fc *fakeConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(0), nil
}

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }

// fakeStmt is a prepared statement; only CopyIn statements are prepared by the workloads.
type fakeStmt struct {
	fc     *fakeConn
	query  string
	copied int64
}

func (s *fakeStmt) Close() error  { return nil }
func (s *fakeStmt) NumInput() int { return -1 }

func (s *fakeStmt) Exec(args []driver.Value) (driver.Result, error) {
	if !strings.HasPrefix(s.query, "INSERTBULK") {
		return nil, errors.New("fake: only CopyIn statements are prepared")
	}
	if len(args) == 0 {
		return driver.RowsAffected(s.copied), nil
	}
	s.copied++
	return driver.RowsAffected(0), nil
}

func (s *fakeStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("fake: no queries on prepared statements")
}

type fakeRows struct {
	cols []string
	rows [][]driver.Value
	i    int
}

func (r *fakeRows) Columns() []string { return r.cols }
func (r *fakeRows) Close() error      { return nil }

func (r *fakeRows) Next(dest []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	copy(dest, r.rows[r.i])
	r.i++
	return nil
}

// narrowRows returns the bigint rows 1..n, with the value of row bad (1-based) replaced by
// bad+1 when bad > 0.
func narrowRows(n, bad int64) [][]driver.Value {
	var rows [][]driver.Value
	for i := int64(1); i <= n; i++ {
		v := i
		if i == bad {
			v = i + 1
		}
		rows = append(rows, []driver.Value{v})
	}
	return rows
}

// wideRows returns the wide rows 1..n as the statement computes them; edit may change a row.
func wideRows(n int64, edit func(i int64, row []driver.Value)) [][]driver.Value {
	var rows [][]driver.Value
	for i := int64(1); i <= n; i++ {
		row := []driver.Value{i, "name-" + itoa(i), wideBase.Add(time.Duration(i) * time.Second), string(appendQuarter(nil, i)), i%2 == 1}
		if edit != nil {
			edit(i, row)
		}
		rows = append(rows, row)
	}
	return rows
}

func itoa(i int64) string { return string(appendInt(nil, i)) }

func appendInt(dst []byte, i int64) []byte {
	if i >= 10 {
		dst = appendInt(dst, i/10)
	}
	return append(dst, byte('0'+i%10))
}

// TestWorkloadAnswers runs each workload operation against answers that are right, then wrong
// in one place: every wrong answer must fail the operation with an error that says what was
// wrong.
func TestWorkloadAnswers(t *testing.T) {
	const rows = 9
	echo := func(_ string, args []driver.NamedValue) ([]string, [][]driver.Value, error) {
		return []string{"", ""}, [][]driver.Value{{args[0].Value, args[1].Value}}, nil
	}
	checksum := func(count, sum int64) fakeAnswer {
		return func(string, []driver.NamedValue) ([]string, [][]driver.Value, error) {
			return []string{"", ""}, [][]driver.Value{{count, sum}}, nil
		}
	}
	fixed := func(cols []string, rs [][]driver.Value) fakeAnswer {
		return func(string, []driver.NamedValue) ([]string, [][]driver.Value, error) { return cols, rs, nil }
	}
	find := func(part string) (workload, bool) {
		for _, w := range workloads(rows, 64) {
			if strings.Contains(w.name, part) {
				return w, true
			}
		}
		return workload{}, false
	}
	tests := []struct {
		name     string
		workload string // a part of the workload's name
		answer   fakeAnswer
		wantErr  string // "" for success
	}{
		{"params echoed", "SELECT @p1", echo, ""},
		{"params altered", "SELECT @p1", func(q string, a []driver.NamedValue) ([]string, [][]driver.Value, error) {
			return []string{"", ""}, [][]driver.Value{{a[0].Value.(int64) + 1, a[1].Value}}, nil
		}, "wrong answer: got (2, \"tdsbridge\"), sent (1, \"tdsbridge\")"},
		{"params no row", "SELECT @p1", fixed([]string{"", ""}, nil), "wrong answer: no row"},
		{"NOCOUNT", "NOCOUNT", fixed(nil, nil), ""},
		{"narrow rows right", "narrow", fixed([]string{"value"}, narrowRows(rows, 0)), ""},
		{"narrow rows wrong value", "narrow", fixed([]string{"value"}, narrowRows(rows, 4)), "row 4: wrong value 5"},
		{"narrow rows one short", "narrow", fixed([]string{"value"}, narrowRows(rows-1, 0)), "wrong answer: 8 rows, want 9"},
		{"wide rows right", "wide", fixed([]string{"id", "name", "ts", "amount", "flag"}, wideRows(rows, nil)), ""},
		{"wide rows wrong name", "wide", fixed([]string{"id", "name", "ts", "amount", "flag"}, wideRows(rows, func(i int64, r []driver.Value) {
			if i == 3 {
				r[1] = "name-4"
			}
		})), "row 3: wrong values"},
		{"wide rows wrong amount", "wide", fixed([]string{"id", "name", "ts", "amount", "flag"}, wideRows(rows, func(i int64, r []driver.Value) {
			if i == 6 {
				r[3] = "1.5"
			}
		})), "row 6: amount \"1.5\", want \"1.5000\""},
		{"wide rows wrong ts", "wide", fixed([]string{"id", "name", "ts", "amount", "flag"}, wideRows(rows, func(i int64, r []driver.Value) {
			if i == 9 {
				r[2] = wideBase
			}
		})), "row 9: wrong values"},
		{"upload counted", "upload", fixed([]string{""}, [][]driver.Value{{int64(64)}}), ""},
		{"upload short", "upload", fixed([]string{""}, [][]driver.Value{{int64(63)}}), "wrong answer: DATALENGTH 63, sent 64 bytes"},
		{"CopyIn right", "CopyIn", checksum(rows, rows*(rows+1)/2), ""},
		{"CopyIn wrong sum", "CopyIn", checksum(rows, 44), "wrong answer: #t holds 9 rows with id sum 44, want 9 and 45"},
		{"CopyIn empty table", "CopyIn", fixed([]string{"", ""}, [][]driver.Value{{int64(0), nil}}), "wrong answer: #t holds 0 rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := find(tt.workload)
			if !ok {
				t.Fatalf("no workload %q", tt.workload)
			}
			db := sql.OpenDB(&fakeConnector{answer: tt.answer})
			defer db.Close()
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			err = w.newOp(&benchConn{db: db, conn: conn})(ctx)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("op: %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("op: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestAppendQuarter(t *testing.T) {
	for i, want := range map[int64]string{1: "0.2500", 2: "0.5000", 3: "0.7500", 4: "1.0000", 100000: "25000.0000", 7: "1.7500"} {
		if got := string(appendQuarter(nil, i)); got != want {
			t.Errorf("appendQuarter(%d) = %q, want %q", i, got, want)
		}
	}
}
