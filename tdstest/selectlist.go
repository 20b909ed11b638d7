package tdstest

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// value is one item of a select list, in one of three forms: a constant (sv), a (max) value
// generated as unit repeated n times and streamed (unit non-nil), or a system value that the
// session gives when the statement runs (sys; col then holds only the alias). col.TI is set in
// the other two.
type value struct {
	col  column
	sv   sqlValue
	unit []byte // nvarchar(max) (UTF-16LE) or varbinary(max): the repeated unit
	n    int64  // repeat count of unit
	sys  *sysItem
}

// resolve is v with the session's value of a system value; any other v is returned as it is.
func (v value) resolve(s *session) value {
	if v.sys == nil {
		return v
	}
	return value{col: v.sys.column(v.col.Name), sv: v.sys.eval(s)}
}

// newColumn is an unnamed result column of type ti.
func newColumn(ti typeInfo, notNull bool) column {
	return column{TI: &ti, NotNull: notNull}
}

func (p *parser) selectList() (statement, error) {
	st := statement{kind: stmtSelect}
	for {
		v, err := p.expr()
		if err != nil {
			return statement{}, err
		}
		if v.col.Name, err = p.alias(); err != nil {
			return statement{}, err
		}
		st.vals = append(st.vals, v)
		if !p.punct(",") {
			break
		}
	}
	if !p.eof() && !p.atStatementStart() && !(p.peek().kind == lexPunct && p.peek().text == ";") {
		return statement{}, p.fail("unsupported SELECT")
	}
	return st, nil
}

// alias parses the optional [AS] name after a select-list item.
func (p *parser) alias() (string, error) {
	if p.keyword("AS") {
		t := p.peek()
		if p.eof() || (t.kind != lexIdent && t.kind != lexString) {
			return "", p.fail("AS needs a column name")
		}
		p.i++
		return t.text, nil
	}
	if t := p.peek(); !p.eof() && t.kind == lexIdent && !p.atStatementStart() && !strings.EqualFold(t.text, "FROM") {
		p.i++
		return t.text, nil
	}
	return "", nil
}

// expr parses one select-list expression.
func (p *parser) expr() (value, error) {
	t := p.peek()
	if p.eof() {
		return value{}, p.fail("SELECT needs an expression")
	}
	switch t.kind {
	case lexNumber:
		p.i++
		return intValue(t.text, false, p)
	case lexPunct:
		return p.punctExpr(t.text)
	case lexSysVar:
		p.i++
		return p.sysVar(t.text)
	case lexVar:
		pv, err := p.variable(t)
		if err != nil {
			return value{}, err
		}
		return value{col: newColumn(pv.TI.nullable(), false), sv: pv.Val}, nil
	case lexNString:
		p.i++
		u := ucs2.Append(nil, t.text)
		if len(u) > 8000 {
			return value{}, p.fail("N'...' literals longer than 4000 characters are not supported")
		}
		ti := typeInfo{Type: dtNVarChar, Size: max(len(u), 2), Collation: serverCollation}
		return value{col: newColumn(ti, false), sv: sqlValue{Len: int64(len(u)), Data: u}}, nil
	case lexIdent:
		return p.identExpr()
	}
	return value{}, p.fail("unsupported expression")
}

// punctExpr parses a signed integer or a parenthesized expression.
func (p *parser) punctExpr(punct string) (value, error) {
	switch punct {
	case "-", "+":
		p.i++
		n := p.peek()
		if p.eof() || n.kind != lexNumber {
			return value{}, p.fail("expected a number")
		}
		p.i++
		return intValue(n.text, punct == "-", p)
	case "(":
		p.i++
		v, err := p.expr()
		if err != nil {
			return value{}, err
		}
		if !p.punct(")") {
			return value{}, p.fail("expected )")
		}
		return v, nil
	}
	return value{}, p.fail("unsupported expression")
}

// identExpr parses an expression that starts with an identifier: a function call or a system
// value.
func (p *parser) identExpr() (value, error) {
	switch {
	case p.keyword("REPLICATE"):
		return p.replicateNVarChar()
	case p.keyword("CAST"):
		if p.i+1 < len(p.toks) && strings.EqualFold(p.toks[p.i+1].text, "SERVERPROPERTY") && p.punct("(") {
			return p.castServerProperty()
		}
		return p.castVarBinary()
	case p.keyword("DATALENGTH"):
		return p.dataLength()
	}
	if v, ok, err := p.sysFunc(); ok {
		return v, err
	}
	return value{}, p.fail("unsupported expression")
}

// intValue is an integer literal: int NOT NULL, as SQL Server types it.
func intValue(digits string, neg bool, p *parser) (value, error) {
	if neg {
		digits = "-" + digits
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return value{}, p.fail("integer out of the int range")
	}
	return value{col: newColumn(tiInt4, true), sv: sqlValue{Len: 4, Data: leBytes(n, 4)}}, nil
}

// replicateNVarChar parses the rest of REPLICATE(CAST(N'<s>' AS nvarchar(max)), <n>).
func (p *parser) replicateNVarChar() (value, error) {
	if !p.punct("(") || !p.keyword("CAST") || !p.punct("(") {
		return value{}, p.fail("expected REPLICATE(CAST(N'<s>' AS nvarchar(max)), <n>)")
	}
	s := p.peek()
	if p.eof() || s.kind != lexNString {
		return value{}, p.fail("expected an N'...' literal")
	}
	p.i++
	if !p.seq("AS nvarchar(max)),") {
		return value{}, p.fail("expected AS nvarchar(max)), <n>")
	}
	n, err := p.count()
	if err != nil {
		return value{}, err
	}
	unit := ucs2.Append([]byte{}, s.text)
	if _, err := plpSize(unit, n); err != nil {
		return value{}, p.fail(err.Error())
	}
	ti := typeInfo{Type: dtNVarChar, Size: plpMaxLen, Collation: serverCollation}
	return value{col: newColumn(ti, false), unit: unit, n: n}, nil
}

// castVarBinary parses the rest of CAST(REPLICATE(CAST('<s>' AS varchar(max)), <n>) AS varbinary(max)).
func (p *parser) castVarBinary() (value, error) {
	if !p.seq("(REPLICATE(CAST(") {
		return value{}, p.fail("expected CAST(REPLICATE(CAST('<s>' AS varchar(max)), <n>) AS varbinary(max))")
	}
	s := p.peek()
	if p.eof() || s.kind != lexString {
		return value{}, p.fail("expected a '...' literal")
	}
	p.i++
	for _, r := range s.text {
		if r >= 0x80 || !unicode.IsPrint(r) && r != '\t' {
			return value{}, p.fail("only printable ASCII varchar literals are supported")
		}
	}
	if !p.seq("AS varchar(max)),") {
		return value{}, p.fail("expected AS varchar(max)), <n>")
	}
	n, err := p.count()
	if err != nil {
		return value{}, err
	}
	if !p.seq("AS varbinary(max))") {
		return value{}, p.fail("expected AS varbinary(max))")
	}
	unit := []byte(s.text)
	if _, err := plpSize(unit, n); err != nil {
		return value{}, p.fail(err.Error())
	}
	return value{col: newColumn(typeInfo{Type: dtBigVarBinary, Size: plpMaxLen}, false), unit: unit, n: n}, nil
}

// count parses "<n>)" of REPLICATE.
func (p *parser) count() (int64, error) {
	t := p.peek()
	if p.eof() || t.kind != lexNumber {
		return 0, p.fail("expected a non-negative repeat count")
	}
	p.i++
	n, err := strconv.ParseInt(t.text, 10, 32)
	if err != nil {
		return 0, p.fail("repeat count out of the int range")
	}
	if !p.punct(")") {
		return 0, p.fail("expected )")
	}
	return n, nil
}

// runSelect computes the select list in the session as the statements before it left it,
// writes its one row (none under SET FMTONLY ON) and sets @@ROWCOUNT to the rows written.
func (c *conn) runSelect(st *statement, status uint16) error {
	vals := make([]value, len(st.vals))
	cols := make([]column, len(st.vals))
	for i, v := range st.vals {
		vals[i] = v.resolve(&c.session)
		cols[i] = c.wireColumn(vals[i].col)
	}
	b := c.appendColMetadata(c.scratch[:0], cols)
	if c.fmtOnly {
		c.rowCount = 0
		return c.emit(c.appendStmtDone(b, status, curCmdSelect, 0))
	}
	if err := c.emit(append(b, tokenRow)); err != nil {
		return err
	}
	for i, v := range vals {
		if err := c.writeValue(v, *cols[i].TI); err != nil {
			return err
		}
	}
	c.rowCount = 1
	return c.emit(c.appendStmtDone(c.scratch[:0], status|doneCount, curCmdSelect, 1))
}

// writeValue writes one column value of a ROW token as type ti (the column's type on the wire):
// a generated (max) value streams as PLP, or as text, ntext or image before TDS 7.2, holding one
// chunk in memory at a time.
func (c *conn) writeValue(v value, ti typeInfo) error {
	switch {
	case v.unit != nil && ti.isPLP():
		return writePLPRepeat(c.out, v.unit, v.n)
	case v.unit != nil:
		return writeLongRepeat(c.out, v.unit, v.n)
	}
	c.valBuf = appendValue(c.valBuf[:0], ti, v.sv)
	_, err := c.out.Write(c.valBuf)
	return err
}
