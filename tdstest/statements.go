package tdstest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// sqlError is an error the server reports with SQL Server's own number, state and class, for
// the cases where tdstest refuses what SQL Server refuses (for example 5373 and 137).
type sqlError struct {
	Number int32
	State  uint8
	Class  uint8
	Msg    string
}

func (e *sqlError) Error() string { return fmt.Sprintf("tdstest: error %d: %s", e.Number, e.Msg) }

// Unwrap makes every *sqlError a refused statement (errUnsupported): the connection stays usable.
func (e *sqlError) Unwrap() error { return errUnsupported }

// maxSeriesRows bounds the rows of one GENERATE_SERIES (see doc.go).
const maxSeriesRows = 10_000_000

// seriesSpec is a GENERATE_SERIES(start, stop) over bigint, step +1 or -1.
type seriesSpec struct {
	start, stop int64
	wide        bool // the wide row of WideRowsQuery, else one bigint column "value"
}

// count is the number of rows of the series.
func (s seriesSpec) count() int64 {
	if s.stop >= s.start {
		return s.stop - s.start + 1
	}
	return s.start - s.stop + 1
}

var lexCache sync.Map // string -> []lexeme

func lexConst(s string) []lexeme {
	if v, ok := lexCache.Load(s); ok {
		return v.([]lexeme)
	}
	toks, err := lex(s)
	if err != nil {
		panic("tdstest: bad constant SQL: " + s)
	}
	lexCache.Store(s, toks)
	return toks
}

// seq consumes the tokens of text if the next tokens are the same: identifiers compared
// case-insensitively, everything else exactly. Otherwise it consumes nothing.
func (p *parser) seq(text string) bool {
	want := lexConst(text)
	if p.i+len(want) > len(p.toks) {
		return false
	}
	for k, w := range want {
		t := p.toks[p.i+k]
		if t.kind != w.kind {
			return false
		}
		if t.kind == lexIdent && !strings.EqualFold(t.text, w.text) || t.kind != lexIdent && t.text != w.text {
			return false
		}
	}
	p.i += len(want)
	return true
}

// wideSelectList is the select list of WideRowsQuery.
const wideSelectList = "CAST(value AS int) AS id, CAST(CONCAT(N'name-', value) AS nvarchar(50)) AS name, " +
	"DATEADD(SECOND, CAST(value AS int), CAST('2026-01-01T00:00:00' AS datetime2(7))) AS ts, " +
	"CAST(value / 4.0 AS decimal(18,4)) AS amount, CAST(value % 2 AS bit) AS flag"

// selectSpecial recognizes the SELECT forms with a FROM clause (after SELECT); ok is false if
// the statement is none of them (nothing consumed).
func (p *parser) selectSpecial() (st statement, ok bool, err error) {
	start := p.i
	switch {
	case p.seq("value FROM GENERATE_SERIES"):
		st, err = p.series(false)
		return st, true, err
	case p.seq(wideSelectList + " FROM GENERATE_SERIES"):
		st, err = p.series(true)
		return st, true, err
	case p.seq("COUNT(*) FROM"):
		st, err = p.tableRef(statement{kind: stmtCount})
		return st, true, err
	case p.seq("COUNT_BIG(*), SUM(CAST("):
		t := p.peek()
		if p.eof() || t.kind != lexIdent || !p.seq(t.text+" AS bigint)) FROM") {
			p.i = start
			return statement{}, true, p.fail("expected COUNT_BIG(*), SUM(CAST(<column> AS bigint)) FROM #table")
		}
		st, err = p.tableRef(statement{kind: stmtCount, countBig: true, sumCol: t.text})
		return st, true, err
	case p.seq("* FROM"):
		st, err = p.tableRef(statement{kind: stmtTableMeta})
		return st, true, err
	}
	return statement{}, false, nil
}

// tableRef parses the #table name that ends a statement.
func (p *parser) tableRef(st statement) (statement, error) {
	name, err := p.tempName()
	if err != nil {
		return statement{}, err
	}
	st.table = name
	return st, p.endOfStatement()
}

// tempName parses a temporary table name (#name, brackets allowed).
func (p *parser) tempName() (string, error) {
	t := p.peek()
	if p.eof() || t.kind != lexIdent {
		return "", p.fail("expected a table name")
	}
	if !strings.HasPrefix(t.text, "#") || len(t.text) < 2 {
		return "", p.fail("tdstest knows temporary tables (#name) only")
	}
	p.i++
	return strings.ToLower(t.text), nil
}

// endOfStatement checks that the statement ends here.
func (p *parser) endOfStatement() error {
	if p.eof() || p.atStatementStart() || p.peek().kind == lexPunct && p.peek().text == ";" {
		return nil
	}
	return p.fail("unexpected text after the statement")
}

// seriesArg is a typed bound of GENERATE_SERIES.
type seriesArg struct {
	typ  string // T-SQL type name
	val  int64
	null bool
}

// series parses "(start, stop)" of GENERATE_SERIES and checks it as SQL Server does: both bounds
// of one type (error 5373); tdstest generates bigint series only.
func (p *parser) series(wide bool) (statement, error) {
	if !p.punct("(") {
		return statement{}, p.fail("expected GENERATE_SERIES(")
	}
	start, err := p.seriesArg()
	if err != nil {
		return statement{}, err
	}
	if !p.punct(",") {
		return statement{}, p.fail("expected , between start and stop")
	}
	stop, err := p.seriesArg()
	if err != nil {
		return statement{}, err
	}
	if p.punct(",") {
		return statement{}, p.fail("GENERATE_SERIES with a step is not supported by tdstest")
	}
	if !p.punct(")") {
		return statement{}, p.fail("expected ) after GENERATE_SERIES's arguments")
	}
	if err := p.endOfStatement(); err != nil {
		return statement{}, err
	}
	if start.typ != stop.typ {
		return statement{}, &sqlError{Number: 5373, State: 2, Class: 16,
			Msg: "All the input parameters should be of the same type. Supported types are tinyint, smallint, int, bigint, decimal and numeric."}
	}
	if start.typ != "bigint" {
		return statement{}, p.fail("tdstest generates bigint series only (start and stop of type bigint)")
	}
	if start.null || stop.null {
		return statement{}, p.fail("GENERATE_SERIES with a NULL bound is not supported by tdstest")
	}
	s := seriesSpec{start: start.val, stop: stop.val, wide: wide}
	if d := s.stop - s.start; d > maxSeriesRows-1 || d < -(maxSeriesRows-1) {
		return statement{}, p.fail(fmt.Sprintf("GENERATE_SERIES of more than %d rows is refused by tdstest", maxSeriesRows))
	}
	if wide && (s.start < -1<<31 || s.stop > 1<<31-1 || s.start > 1<<31-1 || s.stop < -1<<31) {
		return statement{}, p.fail("the wide rows cast value to int: bounds must lie in the int range")
	}
	return statement{kind: stmtSeries, series: s}, nil
}

// seriesArg parses CAST(<integer> AS <type>), an integer literal (int) or a parameter.
func (p *parser) seriesArg() (seriesArg, error) {
	if p.keyword("CAST") {
		if !p.punct("(") {
			return seriesArg{}, p.fail("expected CAST(")
		}
		n, err := p.signedInt()
		if err != nil {
			return seriesArg{}, err
		}
		if !p.keyword("AS") {
			return seriesArg{}, p.fail("expected AS")
		}
		ti, err := p.typeDecl()
		if err != nil {
			return seriesArg{}, err
		}
		if !p.punct(")") {
			return seriesArg{}, p.fail("expected ) after CAST")
		}
		typ := ti.decl()
		if ti.Type == dtIntN && !intFits(n, ti.Size) {
			return seriesArg{}, p.fail("integer out of the range of " + typ)
		}
		return seriesArg{typ: typ, val: n}, nil
	}
	if t := p.peek(); !p.eof() && t.kind == lexVar {
		pv, err := p.variable(t)
		if err != nil {
			return seriesArg{}, err
		}
		a := seriesArg{typ: pv.TI.nullable().decl(), null: pv.Val.Null}
		if pv.TI.nullable().Type == dtIntN && !pv.Val.Null {
			a.val = leInt(pv.Val.Data)
		}
		return a, nil
	}
	n, err := p.signedInt()
	if err != nil {
		return seriesArg{}, err
	}
	if intFits(n, 4) {
		return seriesArg{typ: "int", val: n}, nil
	}
	return seriesArg{typ: fmt.Sprintf("numeric(%d,0)", len(strconv.FormatInt(max(n, -n), 10))), val: n}, nil
}

// signedInt parses an optionally signed integer literal within the bigint range.
func (p *parser) signedInt() (int64, error) {
	neg := p.punct("-")
	if !neg {
		_ = p.punct("+")
	}
	t := p.peek()
	if p.eof() || t.kind != lexNumber {
		return 0, p.fail("expected an integer")
	}
	digits := t.text
	if neg {
		digits = "-" + digits
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, p.fail("integer out of the bigint range")
	}
	p.i++
	return n, nil
}

func intFits(n int64, size int) bool {
	switch size {
	case 1:
		return n >= 0 && n <= 255
	case 2:
		return n >= -1<<15 && n < 1<<15
	case 4:
		return n >= -1<<31 && n < 1<<31
	}
	return true
}

// leInt decodes a little-endian two's complement integer of 1, 2, 4 or 8 bytes (tinyint is
// unsigned).
func leInt(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch len(b) {
	case 1:
		return int64(u)
	case 2:
		return int64(int16(u))
	case 4:
		return int64(int32(u))
	}
	return int64(u)
}

// variable resolves the @name token t (not yet consumed) to its parameter; SQL Server's error
// 137 if it is not declared.
func (p *parser) variable(t lexeme) (*rpcParam, error) {
	p.i++
	pv := p.vars[strings.ToLower(t.text)]
	if pv == nil {
		return nil, &sqlError{Number: 137, State: 2, Class: 15, Msg: fmt.Sprintf("Must declare the scalar variable \"@%s\".", t.text)}
	}
	return pv, nil
}

// createTable parses the rest of CREATE TABLE #name (col type [NULL | NOT NULL], ...).
func (p *parser) createTable() (statement, error) {
	name, err := p.tempName()
	if err != nil {
		return statement{}, err
	}
	st := statement{kind: stmtCreateTable, table: name}
	if st.cols, err = p.columnList(true); err != nil {
		return statement{}, err
	}
	return st, p.endOfStatement()
}

// maxTableColumns is SQL Server's limit on the columns of a table.
const maxTableColumns = 1024

// columnList parses "(col type, ...)": in CREATE TABLE (create) each type may be followed by NULL
// or NOT NULL and a name may not come twice; text, ntext and image are refused.
func (p *parser) columnList(create bool) ([]tableColumn, error) {
	if !p.punct("(") {
		return nil, p.fail("expected ( and the column list")
	}
	var cols []tableColumn
	seen := map[string]bool{}
	for {
		col, err := p.tableColumn(create)
		if err != nil {
			return nil, err
		}
		if create && seen[strings.ToLower(col.Name)] {
			return nil, p.fail("column " + col.Name + " is given twice")
		}
		seen[strings.ToLower(col.Name)] = true
		if cols = append(cols, col); len(cols) > maxTableColumns {
			return nil, p.fail(fmt.Sprintf("more than %d columns", maxTableColumns))
		}
		if p.punct(")") {
			return cols, nil
		}
		if !p.punct(",") {
			if create {
				return nil, p.fail("expected , or ) in the column list (constraints are not supported)")
			}
			return nil, p.fail("expected , or ) in the column list")
		}
	}
}

// tableColumn parses "name type", and in CREATE TABLE (create) an optional NULL or NOT NULL.
func (p *parser) tableColumn(create bool) (tableColumn, error) {
	t := p.peek()
	if p.eof() || t.kind != lexIdent {
		return tableColumn{}, p.fail("expected a column name")
	}
	p.i++
	col := tableColumn{Name: t.text}
	var err error
	if col.TI, err = p.typeDecl(); err != nil {
		return tableColumn{}, err
	}
	if col.TI.Type.isLong() {
		return tableColumn{}, p.fail("tdstest tables cannot hold text, ntext or image columns")
	}
	switch {
	case !create:
	case p.keyword("NOT"):
		if !p.keyword("NULL") {
			return tableColumn{}, p.fail("expected NOT NULL")
		}
		col.NotNull = true
	case p.keyword("NULL"):
	}
	return col, nil
}

// dropTable parses the rest of DROP TABLE [IF EXISTS] #name.
func (p *parser) dropTable() (statement, error) {
	ifExists := p.seq("IF EXISTS")
	name, err := p.tempName()
	if err != nil {
		return statement{}, err
	}
	return statement{kind: stmtDropTable, table: name, ifExists: ifExists}, p.endOfStatement()
}

// insertBulk parses the rest of INSERT BULK #name (col type, ...) [WITH (...)], as go-mssqldb's
// CopyIn sends it.
func (p *parser) insertBulk() (statement, error) {
	name, err := p.tempName()
	if err != nil {
		return statement{}, err
	}
	st := statement{kind: stmtInsertBulk, table: name}
	if st.cols, err = p.columnList(false); err != nil {
		return statement{}, err
	}
	if p.keyword("WITH") {
		// Hints (TABLOCK, ROWS_PER_BATCH = n, ...) change nothing here.
		if err := p.skipParenthesized(); err != nil {
			return statement{}, err
		}
	}
	return st, p.endOfStatement()
}

// skipParenthesized skips "( ... )", nested parentheses included.
func (p *parser) skipParenthesized() error {
	if !p.punct("(") {
		return p.fail("expected (")
	}
	for depth := 1; depth > 0; p.i++ {
		if p.eof() {
			return p.fail("unterminated (")
		}
		switch t := p.peek(); {
		case t.kind == lexPunct && t.text == "(":
			depth++
		case t.kind == lexPunct && t.text == ")":
			depth--
		}
	}
	return nil
}

// dataLength parses the rest of DATALENGTH(@var): bigint for (max) types, int otherwise, NULL
// for NULL, as SQL Server.
func (p *parser) dataLength() (value, error) {
	if !p.punct("(") {
		return value{}, p.fail("expected DATALENGTH(@variable)")
	}
	t := p.peek()
	if p.eof() || t.kind != lexVar {
		return value{}, p.fail("tdstest answers DATALENGTH of a parameter only")
	}
	pv, err := p.variable(t)
	if err != nil {
		return value{}, err
	}
	if !p.punct(")") {
		return value{}, p.fail("expected ) after DATALENGTH's argument")
	}
	ti := typeInfo{Type: dtIntN, Size: 4}
	if pv.TI.isPLP() {
		ti.Size = 8
	}
	v := value{col: column{TI: &ti}, sv: sqlValue{Null: pv.Val.Null}}
	if !pv.Val.Null {
		v.sv.Data = leBytes(dataLength(pv.TI, pv.Val), ti.Size)
		v.sv.Len = int64(ti.Size)
	}
	return v, nil
}

// leBytes encodes n little-endian in size bytes.
func leBytes(n int64, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	return b
}
