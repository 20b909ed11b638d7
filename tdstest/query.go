package tdstest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// errUnsupported is wrapped by every recognizer error: the batch is well formed enough to read but
// is not one the server answers. The connection stays usable.
var errUnsupported = errors.New("tdstest: unsupported statement")

// supportedHelp lists what the server answers, for error messages (doc.go has the full list).
const supportedHelp = "the tdstest server answers SELECT of literals, @@ variables, DB_NAME(), SUSER_SNAME() and other system functions, " +
	"SERVERPROPERTY('...'), parameters and DATALENGTH(@p), " +
	"REPLICATE of nvarchar(max)/varbinary(max), SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1) and its wide form, " +
	"CREATE/DROP TABLE #t, INSERT BULK, SELECT COUNT(*)/COUNT_BIG(*), SUM(CAST(col AS bigint)) FROM #t, SET ..., USE <db>, " +
	"WAITFOR DELAY 'hh:mm:ss', and BEGIN TRAN/COMMIT/ROLLBACK; see the package documentation"

type stmtKind uint8

const (
	stmtSet          stmtKind = iota // SET ... : DONE only
	stmtUse                          // USE db: ENVCHANGE database, DONE
	stmtSelect                       // one row of values
	stmtTran                         // BEGIN TRAN / COMMIT / ROLLBACK: ENVCHANGE of the transaction, DONE
	stmtWaitFor                      // WAITFOR DELAY: DONE after the delay, or DONE with the attention bit
	stmtSeries                       // SELECT ... FROM GENERATE_SERIES: streamed rows
	stmtCreateTable                  // CREATE TABLE #t
	stmtDropTable                    // DROP TABLE #t
	stmtInsertBulk                   // INSERT BULK #t: the next request is a BULK_LOAD message
	stmtCount                        // SELECT COUNT(*) / COUNT_BIG(*), SUM(...) FROM #t
	stmtTableMeta                    // SELECT * FROM #t under SET FMTONLY ON: COLMETADATA only
	stmtDataTypeInfo                 // sp_datatype_info_100: the rows of typeRows
)

// value is one column value of a SELECT.
type value struct {
	col  column
	sv   sqlValue // col.TI != nil: the value, written with appendValue
	i    int32    // typeInt4
	unit []byte   // typeNVarChar (UTF-16LE) or typeBigVarBinary: the repeated unit
	n    int64    // repeat count of unit
}

// statement is one recognized statement of a batch.
type statement struct {
	kind stmtKind
	vals []value // stmtSelect
	db   string  // stmtUse
	// stmtTran: BEGIN (begin), COMMIT (commit) or ROLLBACK (neither)
	begin, commit bool
	delay         time.Duration // stmtWaitFor
	// stmtSet: SET NOCOUNT / FMTONLY ON|OFF (option empty for other SET statements)
	option string
	on     bool
	series seriesSpec // stmtSeries
	// stmtCreateTable, stmtDropTable, stmtInsertBulk, stmtCount, stmtTableMeta
	table    string // lower-case #name
	cols     []tableColumn
	ifExists bool          // DROP TABLE IF EXISTS
	countBig bool          // COUNT_BIG(*), SUM(CAST(sumCol AS bigint)) rather than COUNT(*)
	sumCol   string        // stmtCount with countBig
	typeRows []typeInfoRow // stmtDataTypeInfo
}

// sessionInfo supplies the values of @@ variables and system functions.
type sessionInfo struct {
	spid      uint16
	database  string
	trancount int32
	user      string // the login's user name (SUSER_SNAME())
	host, app string // LOGIN7 HostName and AppName (HOST_NAME(), APP_NAME())
}

// lexical tokens
type lexKind uint8

const (
	lexIdent   lexKind = iota // keyword or identifier (brackets removed)
	lexNumber                 // decimal integer
	lexNString                // N'...'
	lexString                 // '...'
	lexSysVar                 // @@name (text without @@)
	lexVar                    // @name
	lexPunct                  // one of ( ) , ; and operators
)

type lexeme struct {
	kind lexKind
	text string // identifier, digits, decoded string, variable name, or punctuation
	pos  int    // byte offset in the batch
}

// lex splits a batch into tokens, dropping whitespace and comments.
func lex(s string) ([]lexeme, error) {
	var out []lexeme
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated comment at offset %d", errUnsupported, i)
			}
			i += 2 + end + 2
		case (c == 'N' || c == 'n') && i+1 < len(s) && s[i+1] == '\'':
			str, next, err := lexQuoted(s, i+1)
			if err != nil {
				return nil, err
			}
			out = append(out, lexeme{lexNString, str, i})
			i = next
		case c == '\'':
			str, next, err := lexQuoted(s, i)
			if err != nil {
				return nil, err
			}
			out = append(out, lexeme{lexString, str, i})
			i = next
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated [identifier] at offset %d", errUnsupported, i)
			}
			out = append(out, lexeme{lexIdent, s[i+1 : i+end], i})
			i += end + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			out = append(out, lexeme{lexNumber, s[i:j], i})
			i = j
		case c == '@':
			kind, j := lexVar, i+1
			if j < len(s) && s[j] == '@' {
				kind, j = lexSysVar, j+1
			}
			k := j
			for k < len(s) && isIdentByte(s[k]) {
				k++
			}
			out = append(out, lexeme{kind, s[j:k], i})
			i = k
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			out = append(out, lexeme{lexIdent, s[i:j], i})
			i = j
		case c >= 0x80:
			// Non-ASCII outside strings: an identifier in some script; keep it whole.
			j := i
			for j < len(s) && s[j] >= 0x80 {
				j++
			}
			out = append(out, lexeme{lexIdent, s[i:j], i})
			i = j
		default:
			out = append(out, lexeme{lexPunct, string(c), i})
			i++
		}
	}
	return out, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '#' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c == '$' || c == '@' || (c >= '0' && c <= '9')
}

// lexQuoted reads a '...' string starting at s[i] == '\” (” stands for ').
func lexQuoted(s string, i int) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != '\'' {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("%w: unterminated string literal at offset %d", errUnsupported, i)
}

// statementStarts are the keywords that begin a new statement (they end a SET statement).
var statementStarts = map[string]bool{
	"SET": true, "SELECT": true, "USE": true, "IF": true, "BEGIN": true, "COMMIT": true,
	"ROLLBACK": true, "DECLARE": true, "EXEC": true, "EXECUTE": true, "INSERT": true,
	"UPDATE": true, "DELETE": true, "CREATE": true, "DROP": true, "ALTER": true, "PRINT": true,
	"WHILE": true, "RETURN": true, "WITH": true, "SAVE": true, "WAITFOR": true,
}

// parser walks the tokens of one batch.
type parser struct {
	src  string
	toks []lexeme
	i    int
	sess sessionInfo
	vars map[string]*rpcParam // sp_executesql parameters by lower-case name without @; nil in a batch
}

// parseBatch recognizes every statement of a SQL batch. An error (wrapping errUnsupported) means
// the whole batch is refused, as SQL Server refuses a batch that does not compile.
func parseBatch(text string, sess sessionInfo) ([]statement, error) {
	return parseStatements(text, sess, nil)
}

// parseStatements is parseBatch with the parameters of an sp_executesql call.
func parseStatements(text string, sess sessionInfo, vars map[string]*rpcParam) ([]statement, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{src: text, toks: toks, sess: sess, vars: vars}
	var out []statement
	for {
		for p.punct(";") {
		}
		if p.eof() {
			return out, nil
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
}

func (p *parser) eof() bool { return p.i >= len(p.toks) }

func (p *parser) peek() lexeme {
	if p.eof() {
		return lexeme{kind: lexPunct, text: "", pos: len(p.src)}
	}
	return p.toks[p.i]
}

// keyword consumes the next token if it is the identifier kw (case-insensitive).
func (p *parser) keyword(kw string) bool {
	t := p.peek()
	if !p.eof() && t.kind == lexIdent && strings.EqualFold(t.text, kw) {
		p.i++
		return true
	}
	return false
}

// punct consumes the next token if it is the punctuation s.
func (p *parser) punct(s string) bool {
	t := p.peek()
	if !p.eof() && t.kind == lexPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) atStatementStart() bool {
	t := p.peek()
	return !p.eof() && t.kind == lexIdent && statementStarts[strings.ToUpper(t.text)]
}

// fail reports the text from the current token on.
func (p *parser) fail(what string) error {
	rest := p.src[p.peek().pos:]
	if len(rest) > 60 {
		rest = rest[:60] + "..."
	}
	if rest == "" {
		rest = "<end of batch>"
	}
	return fmt.Errorf("%w: %s near %q in batch %q (%s)", errUnsupported, what, rest, shorten(p.src), supportedHelp)
}

func (p *parser) statement() (statement, error) {
	switch {
	case p.keyword("SET"):
		st := statement{kind: stmtSet}
		for _, opt := range []string{"NOCOUNT", "FMTONLY"} {
			if p.keyword(opt) {
				switch {
				case p.keyword("ON"):
					st.option, st.on = opt, true
				case p.keyword("OFF"):
					st.option = opt
				default:
					return statement{}, p.fail("SET " + opt + " needs ON or OFF")
				}
				return st, p.endOfStatement()
			}
		}
		// Everything up to the next statement keyword at parenthesis depth 0.
		depth := 0
		for !p.eof() {
			if depth == 0 && (p.atStatementStart() || p.peek().text == ";" && p.peek().kind == lexPunct) {
				break
			}
			switch t := p.peek(); {
			case t.kind == lexPunct && t.text == "(":
				depth++
			case t.kind == lexPunct && t.text == ")":
				depth--
			}
			p.i++
		}
		return st, nil
	case p.keyword("USE"):
		t := p.peek()
		if p.eof() || t.kind != lexIdent {
			return statement{}, p.fail("USE needs a database name")
		}
		p.i++
		return statement{kind: stmtUse, db: t.text}, nil
	case p.keyword("BEGIN"):
		if !p.keyword("TRAN") && !p.keyword("TRANSACTION") {
			return statement{}, p.fail("only BEGIN TRAN is supported")
		}
		return statement{kind: stmtTran, begin: true}, nil
	case p.keyword("COMMIT"):
		_ = p.keyword("TRAN") || p.keyword("TRANSACTION") || p.keyword("WORK")
		return statement{kind: stmtTran, commit: true}, nil
	case p.keyword("ROLLBACK"):
		_ = p.keyword("TRAN") || p.keyword("TRANSACTION") || p.keyword("WORK")
		return statement{kind: stmtTran}, nil
	case p.keyword("SELECT"):
		if st, ok, err := p.selectSpecial(); ok {
			return st, err
		}
		return p.selectList()
	case p.seq("CREATE TABLE"):
		return p.createTable()
	case p.seq("DROP TABLE"):
		return p.dropTable()
	case p.seq("INSERT BULK"):
		return p.insertBulk()
	case p.keyword("WAITFOR"):
		return p.waitFor()
	case p.dataTypeInfoProc():
		return p.dataTypeInfo()
	}
	return statement{}, p.fail("unsupported statement")
}

// dataTypeInfoProc consumes [EXEC[UTE]] sp_datatype_info_100 (or sp_datatype_info) if it comes
// next.
func (p *parser) dataTypeInfoProc() bool {
	start := p.i
	_ = p.keyword("EXEC") || p.keyword("EXECUTE")
	if p.keyword("sp_datatype_info_100") || p.keyword("sp_datatype_info") {
		return true
	}
	p.i = start
	return false
}

// maxWaitFor bounds WAITFOR DELAY, as SQL Server does (less than 24 hours).
const maxWaitFor = 24 * time.Hour

// waitFor parses the rest of WAITFOR DELAY 'hh:mm[:ss[.fff]]'.
func (p *parser) waitFor() (statement, error) {
	if !p.keyword("DELAY") {
		return statement{}, p.fail("only WAITFOR DELAY is supported")
	}
	t := p.peek()
	if p.eof() || t.kind != lexString {
		return statement{}, p.fail("WAITFOR DELAY needs a 'hh:mm:ss' string")
	}
	d, ok := parseDelay(t.text)
	if !ok {
		return statement{}, p.fail("WAITFOR DELAY needs a time 'hh:mm[:ss[.fff]]' under 24 hours")
	}
	p.i++
	return statement{kind: stmtWaitFor, delay: d}, nil
}

// parseDelay parses hh:mm[:ss[.fff]] into a duration under maxWaitFor.
func parseDelay(s string) (time.Duration, bool) {
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) < 2 || len(parts) > 3 || (hasFrac && len(parts) != 3) {
		return 0, false
	}
	limits := []int{23, 59, 59}
	units := []time.Duration{time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || n > limits[i] || len(part) > 2 {
			return 0, false
		}
		d += time.Duration(n) * units[i]
	}
	if hasFrac {
		if frac == "" || len(frac) > 3 {
			return 0, false
		}
		n, err := strconv.Atoi(frac)
		if err != nil || n < 0 {
			return 0, false
		}
		for range 3 - len(frac) {
			n *= 10
		}
		d += time.Duration(n) * time.Millisecond
	}
	return d, d < maxWaitFor
}

func (p *parser) selectList() (statement, error) {
	st := statement{kind: stmtSelect}
	for {
		v, err := p.expr()
		if err != nil {
			return statement{}, err
		}
		// Optional alias: [AS] name.
		if p.keyword("AS") {
			t := p.peek()
			if p.eof() || (t.kind != lexIdent && t.kind != lexString) {
				return statement{}, p.fail("AS needs a column name")
			}
			v.col.Name = t.text
			p.i++
		} else if t := p.peek(); !p.eof() && t.kind == lexIdent && !p.atStatementStart() && !strings.EqualFold(t.text, "FROM") {
			v.col.Name = t.text
			p.i++
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
		if t.text == "-" || t.text == "+" {
			p.i++
			n := p.peek()
			if p.eof() || n.kind != lexNumber {
				return value{}, p.fail("expected a number")
			}
			p.i++
			return intValue(n.text, t.text == "-", p)
		}
		if t.text == "(" {
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
	case lexSysVar:
		p.i++
		return p.sysVar(t.text)
	case lexVar:
		pv, err := p.variable(t)
		if err != nil {
			return value{}, err
		}
		ti := pv.TI.nullable()
		return value{col: column{TI: &ti}, sv: pv.Val}, nil
	case lexNString:
		p.i++
		u := appendUCS2(nil, t.text)
		if len(u) > 8000 {
			return value{}, p.fail("N'...' literals longer than 4000 characters are not supported")
		}
		return value{col: column{Type: typeNVarChar, MaxLen: uint16(max(len(u), 2))}, unit: u, n: 1}, nil
	case lexIdent:
		if p.keyword("REPLICATE") {
			return p.replicateNVarChar()
		}
		if p.keyword("CAST") {
			if p.i+1 < len(p.toks) && strings.EqualFold(p.toks[p.i+1].text, "SERVERPROPERTY") && p.punct("(") {
				return p.castServerProperty()
			}
			return p.castVarBinary()
		}
		if p.keyword("DATALENGTH") {
			return p.dataLength()
		}
		if v, ok, err := p.sysFunc(); ok {
			return v, err
		}
	}
	return value{}, p.fail("unsupported expression")
}

func intValue(digits string, neg bool, p *parser) (value, error) {
	if neg {
		digits = "-" + digits
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return value{}, p.fail("integer out of the int range")
	}
	return value{col: column{Type: typeInt4}, i: int32(n)}, nil
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
	if !p.keyword("AS") || !p.keyword("nvarchar") || !p.punct("(") || !p.keyword("max") || !p.punct(")") || !p.punct(")") || !p.punct(",") {
		return value{}, p.fail("expected AS nvarchar(max)), <n>")
	}
	n, err := p.count()
	if err != nil {
		return value{}, err
	}
	unit := appendUCS2(nil, s.text)
	if _, err := plpSize(unit, n); err != nil {
		return value{}, p.fail(err.Error())
	}
	return value{col: column{Type: typeNVarChar, MaxLen: plpMaxLen}, unit: unit, n: n}, nil
}

// castVarBinary parses the rest of CAST(REPLICATE(CAST('<s>' AS varchar(max)), <n>) AS varbinary(max)).
func (p *parser) castVarBinary() (value, error) {
	if !p.punct("(") || !p.keyword("REPLICATE") || !p.punct("(") || !p.keyword("CAST") || !p.punct("(") {
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
	if !p.keyword("AS") || !p.keyword("varchar") || !p.punct("(") || !p.keyword("max") || !p.punct(")") || !p.punct(")") || !p.punct(",") {
		return value{}, p.fail("expected AS varchar(max)), <n>")
	}
	n, err := p.count()
	if err != nil {
		return value{}, err
	}
	if !p.keyword("AS") || !p.keyword("varbinary") || !p.punct("(") || !p.keyword("max") || !p.punct(")") || !p.punct(")") {
		return value{}, p.fail("expected AS varbinary(max))")
	}
	unit := []byte(s.text)
	if _, err := plpSize(unit, n); err != nil {
		return value{}, p.fail(err.Error())
	}
	return value{col: column{Type: typeBigVarBinary, MaxLen: plpMaxLen}, unit: unit, n: n}, nil
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
