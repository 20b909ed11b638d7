package tdstest

import (
	"fmt"
	"testing"
)

// TestStmtRunners: every statement kind has a name and a run function.
func TestStmtRunners(t *testing.T) {
	if len(stmtRunners) != len(stmtKindNames) {
		t.Fatalf("%d run functions for %d statement kinds", len(stmtRunners), len(stmtKindNames))
	}
	for k := range stmtKindNames {
		if stmtKindNames[k] == "" || stmtRunners[k] == nil {
			t.Errorf("statement kind %d: name %q, run function set %v", k, stmtKindNames[k], stmtRunners[k] != nil)
		}
	}
	if s := stmtKind(len(stmtKindNames)).String(); s != fmt.Sprintf("stmtKind(%d)", len(stmtKindNames)) {
		t.Errorf("unknown kind's name %q", s)
	}
}

// batchValues runs the batches on one connection and returns the values of every row of the
// last one, in order, and the number of its last ERROR (0 if none).
func batchValues(t *testing.T, c *rawClient, batches ...string) ([]any, int32) {
	t.Helper()
	var vals []any
	var errNum int32
	for _, b := range batches {
		resp, err := c.query(b)
		if err != nil {
			t.Fatal(err)
		}
		vals, errNum = nil, 0
		for _, tok := range decodeResult(t, resp, false) {
			vals = append(vals, tok.values...)
			if tok.typ == tokenError {
				errNum = tok.number
			}
		}
	}
	return vals, errNum
}

// TestBatchRunsInOrder: the statements of a request run in order against the live session, so a
// statement sees the effects of the ones before it in the same batch, as in SQL Server.
func TestBatchRunsInOrder(t *testing.T) {
	series := func(n int) string {
		return fmt.Sprintf("SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), CAST(%d AS bigint))", n)
	}
	tests := []struct {
		name    string
		batches []string // on one connection; the values are those of the last
		want    []any
	}{
		{"BEGIN TRAN then @@TRANCOUNT", []string{"BEGIN TRAN; SELECT @@TRANCOUNT"}, []any{int64(1)}},
		{"nested transactions", []string{"BEGIN TRAN; BEGIN TRAN; SELECT @@TRANCOUNT; COMMIT; SELECT @@TRANCOUNT; " +
			"BEGIN TRAN; ROLLBACK; SELECT @@TRANCOUNT; COMMIT; SELECT @@TRANCOUNT"}, []any{int64(2), int64(1), int64(0), int64(0)}},
		{"USE then DB_NAME()", []string{"SELECT DB_NAME(); USE tempdb; SELECT DB_NAME(); USE [model]; SELECT DB_NAME() AS db"},
			[]any{"master", "tempdb", "model"}},
		{"USE in an earlier batch", []string{"USE tempdb", "SELECT DB_NAME()"}, []any{"tempdb"}},
		{"@@ROWCOUNT after a series", []string{series(4) + "; SELECT @@ROWCOUNT"}, []any{int64(1), int64(2), int64(3), int64(4), int64(4)}},
		{"@@ROWCOUNT after a list of values", []string{"SELECT 7, 8; SELECT @@ROWCOUNT"}, []any{int64(7), int64(8), int64(1)}},
		{"@@ROWCOUNT of @@ROWCOUNT", []string{series(3) + "; SELECT @@ROWCOUNT, @@ROWCOUNT; SELECT @@ROWCOUNT"},
			[]any{int64(1), int64(2), int64(3), int64(3), int64(3), int64(1)}},
		{"@@ROWCOUNT after SET", []string{series(2) + "; SET NOCOUNT OFF; SELECT @@ROWCOUNT"}, []any{int64(1), int64(2), int64(0)}},
		{"@@ROWCOUNT after other SET options", []string{"SELECT 1; SET ANSI_NULLS ON; SELECT @@ROWCOUNT"}, []any{int64(1), int64(0)}},
		{"@@ROWCOUNT after USE", []string{"SELECT 1; USE tempdb; SELECT @@ROWCOUNT"}, []any{int64(1), int64(0)}},
		{"@@ROWCOUNT after BEGIN and COMMIT", []string{"SELECT 1; BEGIN TRAN; SELECT @@ROWCOUNT; SELECT 1; COMMIT; SELECT @@ROWCOUNT"},
			[]any{int64(1), int64(0), int64(1), int64(0)}},
		{"@@ROWCOUNT after WAITFOR", []string{"SELECT 1; WAITFOR DELAY '00:00:00'; SELECT @@ROWCOUNT"}, []any{int64(1), int64(0)}},
		{"@@ROWCOUNT and temporary tables", []string{"SELECT 1; CREATE TABLE #t (id int); SELECT @@ROWCOUNT; " +
			"SELECT COUNT(*) FROM #t; SELECT @@ROWCOUNT; DROP TABLE #t; SELECT @@ROWCOUNT"},
			[]any{int64(1), int64(0), int64(0), int64(1), int64(0)}},
		{"@@ROWCOUNT in the next batch", []string{series(5), "SELECT @@ROWCOUNT"}, []any{int64(5)}},
		{"@@ERROR after a success", []string{"SELECT 1; SELECT @@ERROR"}, []any{int64(1), int64(0)}},
		{"@@ERROR and @@ROWCOUNT after a failed statement", []string{"SELECT 1; SELECT COUNT(*) FROM #missing", "SELECT @@ERROR, @@ROWCOUNT; SELECT @@ERROR"},
			[]any{int64(208), int64(0), int64(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startServer(t, Config{})
			c := dialRaw(t, s)
			c.connect(s, 4096)
			got, errNum := batchValues(t, c, tc.batches...)
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) || errNum != 0 {
				t.Fatalf("values %#v (error %d), want %#v", got, errNum, tc.want)
			}
		})
	}
}

// TestSessionReset: RESETCONNECTION takes the session back to its state after login.
func TestSessionReset(t *testing.T) {
	s := newSession(55)
	s.loggedIn("app", "u", "h", "a")
	s.database, s.tranID, s.tranCount, s.nocount, s.fmtOnly = "tempdb", 3, 2, true, true
	s.tables, s.rowCount, s.lastError = map[string]*tempTable{"#t": {}}, 7, 208
	s.reset()
	want := session{spid: 55, user: "u", host: "h", app: "a", loginDB: "app", database: "app"}
	if fmt.Sprintf("%+v", s) != fmt.Sprintf("%+v", want) {
		t.Fatalf("after reset %+v, want %+v", s, want)
	}
}
