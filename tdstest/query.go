package tdstest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// errUnsupported is wrapped by every recognizer error: the batch is well formed enough to read but
// is not one the server answers. The connection stays usable.
var errUnsupported = errors.New("tdstest: unsupported statement")

// stmtKind is the kind of a recognized statement; run.go has one run function per kind.
type stmtKind uint8

const (
	stmtSet          stmtKind = iota // SET ...
	stmtUse                          // USE db
	stmtSelect                       // SELECT of a list of values: one row
	stmtTran                         // BEGIN TRAN / COMMIT / ROLLBACK
	stmtWaitFor                      // WAITFOR DELAY
	stmtSeries                       // SELECT ... FROM GENERATE_SERIES: streamed rows
	stmtCreateTable                  // CREATE TABLE #t
	stmtDropTable                    // DROP TABLE #t
	stmtInsertBulk                   // INSERT BULK #t: the next request is a BULK_LOAD message
	stmtCount                        // SELECT COUNT(*) / COUNT_BIG(*), SUM(...) FROM #t
	stmtTableMeta                    // SELECT * FROM #t under SET FMTONLY ON: COLMETADATA only
	stmtDataTypeInfo                 // sp_datatype_info_100: the rows of typeRows
)

var stmtKindNames = [...]string{
	stmtSet: "SET", stmtUse: "USE", stmtSelect: "SELECT", stmtTran: "transaction",
	stmtWaitFor: "WAITFOR", stmtSeries: "GENERATE_SERIES", stmtCreateTable: "CREATE TABLE",
	stmtDropTable: "DROP TABLE", stmtInsertBulk: "INSERT BULK", stmtCount: "SELECT COUNT",
	stmtTableMeta: "SELECT *", stmtDataTypeInfo: "sp_datatype_info",
}

func (k stmtKind) String() string {
	if int(k) < len(stmtKindNames) && stmtKindNames[k] != "" {
		return stmtKindNames[k]
	}
	return fmt.Sprintf("stmtKind(%d)", uint8(k))
}

// statement is one recognized statement of a batch. It holds what the text says; what the
// session holds is read when the statement runs.
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
	vars map[string]*rpcParam // sp_executesql parameters by lower-case name without @; nil in a batch
}

// parseBatch recognizes every statement of a SQL batch. An error (wrapping errUnsupported) means
// the whole batch is refused, as SQL Server refuses a batch that does not compile.
func parseBatch(text string) ([]statement, error) {
	return parseStatements(text, nil)
}

// parseStatements is parseBatch with the parameters of an sp_executesql call.
func parseStatements(text string, vars map[string]*rpcParam) ([]statement, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{src: text, toks: toks, vars: vars}
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
		return p.set()
	case p.keyword("USE"):
		return p.use()
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

// set parses the rest of a SET statement: NOCOUNT and FMTONLY ON|OFF, or any other option, taken
// up to the next statement keyword at parenthesis depth 0.
func (p *parser) set() (statement, error) {
	st := statement{kind: stmtSet}
	for _, opt := range []string{"NOCOUNT", "FMTONLY"} {
		if !p.keyword(opt) {
			continue
		}
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
	for depth := 0; !p.eof(); p.i++ {
		t := p.peek()
		if depth == 0 && (p.atStatementStart() || t.kind == lexPunct && t.text == ";") {
			break
		}
		switch {
		case t.kind == lexPunct && t.text == "(":
			depth++
		case t.kind == lexPunct && t.text == ")":
			depth--
		}
	}
	return st, nil
}

// use parses the database name of USE.
func (p *parser) use() (statement, error) {
	t := p.peek()
	if p.eof() || t.kind != lexIdent {
		return statement{}, p.fail("USE needs a database name")
	}
	p.i++
	return statement{kind: stmtUse, db: t.text}, nil
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
		ms, ok := parseMillis(frac)
		if !ok {
			return 0, false
		}
		d += ms
	}
	return d, d < maxWaitFor
}

// parseMillis parses the 1 to 3 digits after the seconds' point.
func parseMillis(frac string) (time.Duration, bool) {
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
	return time.Duration(n) * time.Millisecond, true
}
