package tdstest

import (
	"fmt"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// Values of the session and server that the system variables and functions return.
const (
	serverProductVersion = "16.0.1000.6" // as in serverVersionStr and LOGINACK's 16.0.1000
	serverEdition        = "Developer Edition (64-bit)"
	serverEngineEdition  = 3 // Enterprise (Developer and Evaluation included)
	serverCollationName  = "SQL_Latin1_General_CP1_CI_AS"
	sessionLanguage      = "us_english"
	sessionSchema        = "dbo" // USER_NAME(), SCHEMA_NAME(), CURRENT_USER: every login is dbo
)

// sysItem is one @@ variable or system function of a select list: its name as written, the
// column SQL Server gives it, and how its value comes from the session when its statement runs.
// Exactly one of num (integer types) and text (character types) is set.
type sysItem struct {
	name    string // as written, upper case: "@@SPID", "DB_NAME()", "SYSTEM_USER"
	ti      typeInfo
	notNull bool
	about   string // what the value is, for the package documentation
	num     func(s *session) int64
	text    func(s *session) string
}

// The column types of the system values.
var (
	tiTinyint  = typeInfo{Type: dtInt1, Size: 1}
	tiSmallint = typeInfo{Type: dtInt2, Size: 2}
	tiInt4     = typeInfo{Type: dtInt4, Size: 4}
	tiSysname  = typeInfo{Type: dtNVarChar, Size: 256, Collation: serverCollation} // nvarchar(128)
	tiVersion  = typeInfo{Type: dtNVarChar, Size: 600, Collation: serverCollation} // nvarchar(300)
)

func constNum(n int64) func(*session) int64 { return func(*session) int64 { return n } }
func constText(t string) func(*session) string {
	return func(*session) string { return t }
}

// sysItems is the registry of the system variables and functions tdstest answers. The parser
// looks names up here, and the error text, supportedHelp and doc.go's list are made from it
// (TestSysItemsDoc compares doc.go with it).
var sysItems = []sysItem{
	{name: "@@SPID", ti: tiSmallint, notNull: true, about: "the SPID of the packet headers",
		num: func(s *session) int64 { return int64(s.spid) }},
	{name: "@@TRANCOUNT", ti: tiInt4, notNull: true, about: "the nesting of open transactions (BEGIN TRAN adds one, COMMIT removes one, ROLLBACK ends all)",
		num: func(s *session) int64 { return int64(s.tranCount) }},
	{name: "@@ROWCOUNT", ti: tiInt4, notNull: true, about: "the rows the previous statement returned or loaded (1 for a list of values), 0 after one that returns none or failed",
		num: func(s *session) int64 { return s.rowCount }},
	{name: "@@ERROR", ti: tiInt4, notNull: true, about: "the number of the error the previous statement failed with, 0 after a success",
		num: func(s *session) int64 { return int64(s.lastError) }},
	{name: "@@MICROSOFTVERSION", ti: tiInt4, notNull: true, about: "16.0.1000 encoded as SQL Server does", num: constNum(16<<24 | 1000)},
	{name: "@@MAX_PRECISION", ti: tiTinyint, notNull: true, about: "38", num: constNum(38)},
	{name: "@@DATEFIRST", ti: tiTinyint, notNull: true, about: "7", num: constNum(7)},
	{name: "@@LANGID", ti: tiSmallint, notNull: true, about: "0", num: constNum(0)},
	{name: "@@LOCK_TIMEOUT", ti: tiInt4, notNull: true, about: "-1", num: constNum(-1)},
	{name: "@@VERSION", ti: tiVersion, about: "the server's version text, with ProductVersion", text: constText(serverVersionStr)},
	{name: "@@SERVERNAME", ti: tiSysname, about: "'" + serverInstance + "'", text: constText(serverInstance)},
	{name: "@@SERVICENAME", ti: tiSysname, about: "'MSSQLSERVER'", text: constText("MSSQLSERVER")},
	{name: "@@LANGUAGE", ti: tiSysname, about: "'" + sessionLanguage + "'", text: constText(sessionLanguage)},
	{name: "DB_NAME()", ti: tiSysname, about: "the current database, as the login and USE set it",
		text: func(s *session) string { return s.database }},
	{name: "SUSER_SNAME()", ti: tiSysname, about: "the login's user name", text: func(s *session) string { return s.user }},
	{name: "SUSER_NAME()", ti: tiSysname, about: "the login's user name", text: func(s *session) string { return s.user }},
	{name: "SYSTEM_USER", ti: tiSysname, about: "the login's user name", text: func(s *session) string { return s.user }},
	{name: "USER_NAME()", ti: tiSysname, about: "'" + sessionSchema + "'", text: constText(sessionSchema)},
	{name: "SCHEMA_NAME()", ti: tiSysname, about: "'" + sessionSchema + "'", text: constText(sessionSchema)},
	{name: "CURRENT_USER", ti: tiSysname, about: "'" + sessionSchema + "'", text: constText(sessionSchema)},
	{name: "SESSION_USER", ti: tiSysname, about: "'" + sessionSchema + "'", text: constText(sessionSchema)},
	{name: "USER", ti: tiSysname, about: "'" + sessionSchema + "'", text: constText(sessionSchema)},
	{name: "HOST_NAME()", ti: tiSysname, about: "LOGIN7's HostName", text: func(s *session) string { return s.host }},
	{name: "APP_NAME()", ti: tiSysname, about: "LOGIN7's AppName", text: func(s *session) string { return s.app }},
}

// sysByName indexes sysItems by name as written.
var sysByName = func() map[string]*sysItem {
	m := make(map[string]*sysItem, len(sysItems))
	for i := range sysItems {
		m[sysItems[i].name] = &sysItems[i]
	}
	return m
}()

// lookupSys returns the registry entry of a name as written (any case), or nil.
func lookupSys(name string) *sysItem { return sysByName[strings.ToUpper(name)] }

// column is the result column of the item, named name.
func (it *sysItem) column(name string) column {
	ti := it.ti
	return column{Name: name, TI: &ti, NotNull: it.notNull}
}

// eval is the item's value in session s.
func (it *sysItem) eval(s *session) sqlValue {
	if it.num != nil {
		return sqlValue{Len: int64(it.ti.Size), Data: leBytes(it.num(s), it.ti.Size)}
	}
	u := ucs2.Append(nil, it.text(s))
	return sqlValue{Len: int64(len(u)), Data: u}
}

// typeName is the item's type as SQL Server's documentation names it.
func (it *sysItem) typeName() string {
	if it.ti == tiSysname {
		return "sysname"
	}
	return it.ti.decl()
}

// docLine is the item's line in doc.go's list.
func (it *sysItem) docLine() string {
	return fmt.Sprintf("%s %s: %s", it.name, it.typeName(), it.about)
}

// sysNames lists the names of the registry whose name has the prefix, comma-separated.
func sysNames(prefix string) string {
	var names []string
	for _, it := range sysItems {
		if strings.HasPrefix(it.name, prefix) {
			names = append(names, it.name)
		}
	}
	return strings.Join(names, ", ")
}

// unknownSysVar is the text of the error for an @@ variable outside the registry.
var unknownSysVar = "unsupported @@ variable (tdstest answers " + sysNames("@@") + ")"

// supportedHelp lists what the server answers, for error messages (doc.go has the full list).
var supportedHelp = "the tdstest server answers SELECT of literals, parameters, DATALENGTH(@p), " + sysNames("") +
	", SERVERPROPERTY('...') and CAST(SERVERPROPERTY('...') AS ...), " +
	"REPLICATE of nvarchar(max)/varbinary(max), SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1) and its wide form, " +
	"CREATE/DROP TABLE #t, INSERT BULK, SELECT COUNT(*)/COUNT_BIG(*), SUM(CAST(col AS bigint)) FROM #t, SET ..., USE <db>, " +
	"WAITFOR DELAY 'hh:mm:ss', BEGIN TRAN/COMMIT/ROLLBACK and sp_datatype_info_100; see the package documentation"

// sysVar looks up @@name (name without @@) in the registry.
func (p *parser) sysVar(name string) (value, error) {
	it := lookupSys("@@" + name)
	if it == nil {
		return value{}, p.fail(unknownSysVar)
	}
	return value{sys: it}, nil
}

// sysFunc parses a system function, a niladic function or SERVERPROPERTY at the current
// identifier; ok is false (nothing consumed) if it is none of them.
func (p *parser) sysFunc() (v value, ok bool, err error) {
	t := p.peek()
	name := strings.ToUpper(t.text)
	if it := lookupSys(name); it != nil && !strings.HasPrefix(name, "@@") && !strings.HasSuffix(name, ")") {
		p.i++
		return value{sys: it}, true, nil
	}
	if it := lookupSys(name + "()"); it != nil && !strings.HasSuffix(name, ")") {
		p.i++
		if !p.punct("(") || !p.punct(")") {
			return value{}, true, p.fail("expected " + it.name + " (tdstest answers it without arguments)")
		}
		return value{sys: it}, true, nil
	}
	if name == "SERVERPROPERTY" {
		p.i++
		v, err := p.serverPropertyValue()
		return v, true, err
	}
	return value{}, false, nil
}
