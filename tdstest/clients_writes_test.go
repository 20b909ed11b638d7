package tdstest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// What the node and python clients send after their queries (see TestTedious and TestPytds): a
// 1 MiB varbinary(max) parameter echoed back, a bulk load into a temporary table, and the count
// and sum that prove every row arrived. tedious loads inside a transaction of its own transaction
// manager requests, pytds inside the transaction it keeps open when autocommit is off.
//
// The clients make bulk row i (1-based) by the same rule: id i (bigint NOT NULL), name
// "name-<i>" or NULL when i%7 == 0 (nvarchar(50)), amount i/4 (decimal(18,4)), ts
// 2026-01-01 00:00:(i%60) (datetime2(7)), flag i%2 == 0 (bit), data {i&255, 1, 2} or NULL when
// i%5 == 0 (varbinary(max)). The server validates each value against its column and keeps the
// row count and the sum of id.
const (
	uploadLen  = 1 << 20
	uploadFill = 0xa5
	bulkTable  = "#loaded"
	bulkN      = 2000
)

// uploadQuery echoes the upload and its length.
const uploadQuery = "SELECT DATALENGTH(@p1), @p1"

// countQuery counts the bulk-loaded rows and sums their ids.
const countQuery = "SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM " + bulkTable

// writeStep is one query of a client's writes and the line it must print.
type writeStep struct {
	query  any    // a SQL text or a client's {"bulk": ...} / {"tran": ...} request
	params any    // the client's parameter list, or nil
	row    string // the first row, as JSON; "" for a step that returns none
	rows   int64  // for a bulk load: the row count the server confirmed
}

// uploadSummary is how both clients print the echoed upload.
func uploadSummary() string {
	return fmt.Sprintf("<%d bytes, sha256 %x>", uploadLen, sha256.Sum256(bytes.Repeat([]byte{uploadFill}, uploadLen)))
}

// tediousWrites: tedious returns bigint as a string.
func tediousWrites() []writeStep {
	bigints := func(a, b int64) string { return fmt.Sprintf(`["%d", "%d"]`, a, b) }
	return []writeStep{
		{query: uploadQuery,
			params: []any{map[string]any{"name": "p1", "type": "VarBinary", "fill": fmt.Sprintf("%02x", uploadFill),
				"length": uploadLen, "options": map[string]any{"length": "max"}}},
			row: fmt.Sprintf(`["%d", %q]`, uploadLen, uploadSummary())},
		{query: map[string]any{"tran": "begin"}},
		{query: map[string]any{"bulk": map[string]any{"table": bulkTable, "rows": bulkN}}, rows: bulkN},
		{query: countQuery, row: bigints(bulkN, bulkN*(bulkN+1)/2)},
		{query: "SELECT @@TRANCOUNT", row: "[1]"},
		{query: map[string]any{"tran": "commit"}},
		{query: "SELECT @@TRANCOUNT", row: "[0]"},
		{query: map[string]any{"tran": "begin"}},
		{query: map[string]any{"tran": "rollback"}},
		{query: "SELECT @@TRANCOUNT", row: "[0]"},
	}
}

// pytdsWrites: pytds names parameters %s, each used once, so the upload is sent twice (as @p1
// and @p2 of one request). With autocommit off, pytds keeps a transaction open throughout.
func pytdsWrites(autocommit bool) []writeStep {
	tranCount := "[1]"
	if autocommit {
		tranCount = "[0]"
	}
	upload := map[string]any{"decl": "varbinary(max)", "fill": fmt.Sprintf("%02x", uploadFill), "length": uploadLen}
	return []writeStep{
		{query: "SELECT DATALENGTH(%s), %s", params: []any{upload, upload},
			row: fmt.Sprintf(`[%d, %q]`, uploadLen, uploadSummary())},
		{query: map[string]any{"bulk": map[string]any{"table": bulkTable, "rows": bulkN}}, rows: bulkN},
		{query: countQuery, row: fmt.Sprintf("[%d, %d]", bulkN, bulkN*(bulkN+1)/2)},
		{query: "SELECT @@TRANCOUNT", row: tranCount},
	}
}

// appendWrites appends the steps' queries and parameters to a client's lists.
func appendWrites(queries, params []any, steps []writeStep) ([]any, []any) {
	for _, s := range steps {
		queries = append(queries, s.query)
		params = append(params, s.params)
	}
	return queries, params
}

// checkWrites checks the lines the steps printed (res starts at the first step's line) and the
// server's record of the bulk load.
func checkWrites(t *testing.T, res []clientLine, steps []writeStep, log *recordingLog) {
	t.Helper()
	for i, s := range steps {
		name, ok := s.query.(string)
		if !ok {
			b, _ := json.Marshal(s.query)
			name = string(b)
		}
		l := res[i]
		switch {
		case s.row != "":
			sameJSON(t, name, l.Row, s.row)
		case s.rows != 0 && l.Rows != s.rows:
			t.Errorf("%s: the server confirmed %d rows, want %d", name, l.Rows, s.rows)
		}
	}
	if want := fmt.Sprintf("bulk load into %s: %d rows", bulkTable, bulkN); !strings.Contains(log.String(), want) {
		t.Errorf("server log lacks %q", want)
	}
}
