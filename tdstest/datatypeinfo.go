package tdstest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// sp_datatype_info_100 (and sp_datatype_info) is how ODBC drivers answer SQLGetTypeInfo: FreeTDS's
// ODBC driver sends "sp_datatype_info_100 <ODBC type>, <ODBC version>" as a batch when pyodbc
// asks for the largest varchar, nvarchar and varbinary lengths and the datetime precision, and
// pyodbc sizes its parameters by the answer (without one it truncates long binary values to
// 8000 bytes). tdstest answers for the ODBC types below, with SQL Server's rows; other types get
// the usual error.

// typeInfoRow is one row of sp_datatype_info_100: the ODBC 3 columns of SQLGetTypeInfo and
// SQL Server's USERTYPE. A field of -1 is NULL.
type typeInfoRow struct {
	name               string
	dataType           int64 // ODBC SQL type
	precision          int64 // COLUMN_SIZE
	prefix, suffix     string
	createParams       string
	nullable, caseSens int64
	searchable         int64
	unsigned, money    int64
	autoIncrement      int64
	minScale, maxScale int64
	sqlDataType, sub   int64 // SQL_DATA_TYPE, SQL_DATETIME_SUB
	radix              int64 // NUM_PREC_RADIX
	userType           int64
}

// typeInfoRows are SQL Server's rows for the types tdstest answers, in its order (by DATA_TYPE,
// then the closest type first).
var typeInfoRows = []typeInfoRow{
	{"bigint", -5, 19, "", "", "", 1, 0, 2, 0, 0, 0, 0, 0, -5, -1, 10, 0},
	{"varbinary", -3, 8000, "0x", "", "max length", 1, 0, 2, -1, 0, -1, -1, -1, -3, -1, -1, 4},
	{"nvarchar", -9, 4000, "N'", "'", "max length", 1, 0, 3, -1, 0, -1, -1, -1, -9, -1, -1, 0},
	{"sysname", -9, 128, "N'", "'", "", 0, 0, 3, -1, 0, -1, -1, -1, -9, -1, -1, 0},
	{"int", 4, 10, "", "", "", 1, 0, 2, 0, 0, 0, 0, 0, 4, -1, 10, 7},
	{"varchar", 12, 8000, "'", "'", "max length", 1, 0, 3, -1, 0, -1, -1, -1, 12, -1, -1, 2},
	{"datetime", 93, 23, "'", "'", "", 1, 0, 3, -1, 0, -1, 3, 3, 9, 3, -1, 12},
	{"smalldatetime", 93, 16, "'", "'", "", 1, 0, 3, -1, 0, -1, 0, 0, 9, 3, -1, 22},
	{"datetime2", 93, 27, "'", "'", "scale", 1, 0, 3, -1, 0, -1, 0, 7, 9, 3, -1, 0},
}

// typeInfoColumns are the result columns: sysname, smallint, int and varchar(32) ones.
var typeInfoColumns = func() []column {
	sysname := typeInfo{Type: dtNVarChar, Size: 256, Collation: serverCollation}
	small := typeInfo{Type: dtIntN, Size: 2}
	integer := typeInfo{Type: dtIntN, Size: 4}
	str := typeInfo{Type: dtBigVarChar, Size: 32, Collation: serverCollation}
	kinds := []struct {
		name string
		ti   *typeInfo
	}{
		{"TYPE_NAME", &sysname}, {"DATA_TYPE", &small}, {"PRECISION", &integer}, {"LITERAL_PREFIX", &str},
		{"LITERAL_SUFFIX", &str}, {"CREATE_PARAMS", &str}, {"NULLABLE", &small}, {"CASE_SENSITIVE", &small},
		{"SEARCHABLE", &small}, {"UNSIGNED_ATTRIBUTE", &small}, {"MONEY", &small}, {"AUTO_INCREMENT", &small},
		{"LOCAL_TYPE_NAME", &sysname}, {"MINIMUM_SCALE", &small}, {"MAXIMUM_SCALE", &small}, {"SQL_DATA_TYPE", &small},
		{"SQL_DATETIME_SUB", &small}, {"NUM_PREC_RADIX", &integer}, {"INTERVAL_PRECISION", &small}, {"USERTYPE", &small},
	}
	cols := make([]column, len(kinds))
	for i, k := range kinds {
		cols[i] = column{Name: k.name, TI: k.ti}
	}
	return cols
}()

// values are the row's column values, in typeInfoColumns' order.
func (r typeInfoRow) values() []sqlValue {
	num := func(n int64, size int) sqlValue {
		if n == -1 {
			return sqlValue{Null: true}
		}
		return sqlValue{Len: int64(size), Data: leBytes(n, size)}
	}
	signed := func(n int64) sqlValue { return sqlValue{Len: 2, Data: leBytes(n, 2)} } // DATA_TYPE may be negative
	text := func(s string, utf16 bool) sqlValue {
		if s == "" {
			return sqlValue{Null: true}
		}
		b := []byte(s)
		if utf16 {
			b = ucs2.Append(nil, s)
		}
		return sqlValue{Len: int64(len(b)), Data: b}
	}
	return []sqlValue{
		text(r.name, true), signed(r.dataType), num(r.precision, 4), text(r.prefix, false),
		text(r.suffix, false), text(r.createParams, false), num(r.nullable, 2), num(r.caseSens, 2),
		num(r.searchable, 2), num(r.unsigned, 2), num(r.money, 2), num(r.autoIncrement, 2),
		text(r.name, true), num(r.minScale, 2), num(r.maxScale, 2), signed(r.sqlDataType),
		num(r.sub, 2), num(r.radix, 4), {Null: true}, num(r.userType, 2),
	}
}

// typeInfoFor returns the rows for ODBC type t (0: all types), or an error naming the types
// tdstest answers.
func typeInfoFor(t int64) ([]typeInfoRow, error) {
	var out []typeInfoRow
	for _, r := range typeInfoRows {
		if t == 0 || r.dataType == t {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		var known []string
		seen := map[int64]bool{}
		for _, r := range typeInfoRows {
			if !seen[r.dataType] {
				seen[r.dataType] = true
				known = append(known, fmt.Sprint(r.dataType))
			}
		}
		sort.Strings(known)
		return nil, fmt.Errorf("%w: sp_datatype_info_100 for ODBC type %d: tdstest answers the types %s and 0 (all) only",
			errUnsupported, t, strings.Join(known, ", "))
	}
	return out, nil
}

// dataTypeInfo parses the rest of [EXEC] sp_datatype_info_100 <type> [, <ODBC version>].
func (p *parser) dataTypeInfo() (statement, error) {
	n, err := p.signedInt()
	if err != nil {
		return statement{}, err
	}
	if p.punct(",") {
		if _, err := p.signedInt(); err != nil {
			return statement{}, err
		}
	}
	rows, err := typeInfoFor(n)
	if err != nil {
		return statement{}, err
	}
	return statement{kind: stmtDataTypeInfo, typeRows: rows}, p.endOfStatement()
}

// runDataTypeInfo writes the result of sp_datatype_info_100 as SQL Server does for a procedure:
// COLMETADATA, the rows, DONEINPROC with the count, RETURNSTATUS 0, DONEPROC with status.
// @@ROWCOUNT becomes the rows of the procedure's SELECT, its last statement, which EXECUTE
// preserves.
func (c *conn) runDataTypeInfo(st *statement, status uint16) error {
	rows := st.typeRows
	c.rowCount = int64(len(rows))
	b := c.appendColMetadata(c.scratch[:0], typeInfoColumns)
	for _, r := range rows {
		b = append(b, tokenRow)
		for i, v := range r.values() {
			b = appendValue(b, *typeInfoColumns[i].TI, v)
		}
	}
	done := uint16(doneMore | doneCount)
	if c.nocount {
		done = doneMore
	}
	b = c.appendDoneToken(b, tokenDoneInProc, done, curCmdSelect, uint64(len(rows)))
	b = append(b, tokenReturnStatus, 0, 0, 0, 0)
	b = c.appendDoneToken(b, tokenDoneProc, status, curCmdExecute, 0)
	return c.emit(b)
}
