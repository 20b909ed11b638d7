package tdstest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

func wire(b []byte) *wireReader { return newWireReader(bytes.NewReader(b)) }

func TestReadTypeInfo(t *testing.T) {
	tests := map[string]typeInfoCase{
		"INTN 8":            {[]byte{0x26, 8}, typeInfo{Type: dtIntN, Size: 8}, ""},
		"INT4 fixed":        {[]byte{0x38}, typeInfo{Type: dtInt4, Size: 4}, ""},
		"DECIMALN 18,4":     {[]byte{0x6A, 9, 18, 4}, typeInfo{Type: dtDecimalN, Size: 9, Prec: 18, Scale: 4}, ""},
		"NVARCHAR max":      {cat([]byte{0xE7}, le16(0xFFFF), serverCollation[:]), typeInfo{Type: dtNVarChar, Size: plpMaxLen, Collation: serverCollation}, ""},
		"DATETIME2 7":       {[]byte{0x2A, 7}, typeInfo{Type: dtDateTime2N, Scale: 7}, ""},
		"INTN 3":            {[]byte{0x26, 3}, typeInfo{}, "length 3 not valid"},
		"DECIMAL prec 39":   {[]byte{0x6A, 17, 39, 0}, typeInfo{}, "precision 39"},
		"DECIMAL scale>p":   {[]byte{0x6A, 5, 5, 6}, typeInfo{}, "scale 6"},
		"DECIMAL too short": {[]byte{0x6A, 5, 18, 0}, typeInfo{}, "too small for precision 18"},
		"TIME scale 8":      {[]byte{0x29, 8}, typeInfo{}, "scale 8"},
		"NVARCHAR odd":      {cat([]byte{0xE7}, le16(7), serverCollation[:]), typeInfo{}, "odd length"},
		"NCHAR max":         {cat([]byte{0xEF}, le16(0xFFFF), serverCollation[:]), typeInfo{}, "at most 8000"},
		"VARBINARY 8001":    {cat([]byte{0xA5}, le16(8001)), typeInfo{}, "at most 8000"},
		"collation cut":     {cat([]byte{0xA7}, le16(10), []byte{1, 2}), typeInfo{}, "collation"},
		"XML":               {[]byte{0xF1, 0}, typeInfo{}, "not supported"},
		"empty":             {nil, typeInfo{}, "ends inside a field"},
	}
	runTypeInfoCases(t, tests)
}

func TestReadValue(t *testing.T) {
	nv := typeInfo{Type: dtNVarChar, Size: 20, Collation: serverCollation}
	nvMax := typeInfo{Type: dtNVarChar, Size: plpMaxLen, Collation: serverCollation}
	dec := typeInfo{Type: dtDecimalN, Size: 9, Prec: 4, Scale: 0}
	tests := map[string]valueCase{
		"bigint":           {typeInfo{Type: dtIntN, Size: 8}, cat([]byte{8}, le64(5)), sqlValue{Len: 8, Data: le64(5)}, ""},
		"bigint NULL":      {typeInfo{Type: dtIntN, Size: 8}, []byte{0}, sqlValue{Null: true}, ""},
		"bigint len 4":     {typeInfo{Type: dtIntN, Size: 8}, cat([]byte{4}, le32(5)), sqlValue{}, "length 4, want 8..8"},
		"int4 fixed":       {typeInfo{Type: dtInt4, Size: 4}, le32(9), sqlValue{Len: 4, Data: le32(9)}, ""},
		"nvarchar":         {nv, cat(le16(2), []byte{'a', 0}), sqlValue{Len: 2, Data: []byte{'a', 0}}, ""},
		"nvarchar long":    {nv, cat(le16(22), make([]byte, 22)), sqlValue{}, "exceeds the declared 20"},
		"nvarchar odd":     {nv, cat(le16(3), make([]byte, 3)), sqlValue{}, "odd byte count"},
		"nvarchar cut":     {nv, cat(le16(4), []byte{1}), sqlValue{}, "ends inside a field"},
		"plp two chunks":   {nvMax, cat(le64(4), le32(2), []byte{'a', 0}, le32(2), []byte{'b', 0}, le32(0)), sqlValue{Len: 4, Data: []byte{'a', 0, 'b', 0}}, ""},
		"plp unknown":      {nvMax, cat(le64(plpUnknown), le32(2), []byte{'a', 0}, le32(0)), sqlValue{Len: 2, Data: []byte{'a', 0}}, ""},
		"plp short":        {nvMax, cat(le64(6), le32(2), []byte{'a', 0}, le32(0)), sqlValue{}, "announced length is 6"},
		"plp chunk excess": {nvMax, cat(le64(2), le32(4), []byte{'a', 0, 'b', 0}, le32(0)), sqlValue{}, "exceeds the announced length"},
		"plp over limit":   {nvMax, cat(le64(1<<40), le32(0)), sqlValue{}, "exceeds the limit"},
		"plp no end":       {nvMax, cat(le64(2), le32(2), []byte{'a', 0}), sqlValue{}, "ends inside a field"},
		"decimal sign 2":   {dec, cat([]byte{9, 2}, le64(1)), sqlValue{}, "sign byte 2"},
		"decimal digits":   {dec, cat([]byte{9, 1}, le64(10000)), sqlValue{}, "more than 4 digits"},
		"bit 2":            {typeInfo{Type: dtBitN, Size: 1}, []byte{1, 2}, sqlValue{}, "bit value 2"},
		"time 24h":         {typeInfo{Type: dtTimeN, Scale: 0}, []byte{3, 0x80, 0x51, 0x01}, sqlValue{}, "not below 24 hours"},
		"date 10000":       {typeInfo{Type: dtDateN}, []byte{3, 0xFF, 0xFF, 0xFF}, sqlValue{}, "beyond 9999-12-31"},
		"offset 15h":       {typeInfo{Type: dtDateTimeOffset, Scale: 0}, cat([]byte{8, 0, 0, 0, 0, 0, 0}, le16(900)), sqlValue{}, "offset of 900"},
		"guid len 15":      {typeInfo{Type: dtGUID, Size: 16}, cat([]byte{15}, make([]byte, 15)), sqlValue{}, "length 15"},
	}
	runValueCases(t, tests)
}

// rpcTail is a parameter list appended to executeSQLMessage's headers by hand.
func TestParseRPCErrors(t *testing.T) {
	good := executeSQLMessage("SELECT @p1", false, 0, []rpcParamBytes{{"bigint", []byte{0x26, 8}, cat([]byte{8}, le64(1))}})
	req, err := parseRPC(good, 1<<20)
	if err != nil || !req.isExecuteSQL() || len(req.Params) != 3 || req.Params[2].Name != "@p1" {
		t.Fatalf("good request: %+v, %v", req, err)
	}
	byName := executeSQLMessage("SELECT 1", true, 7, nil)
	if req, err := parseRPC(byName, 1<<20); err != nil || !req.isExecuteSQL() || req.TranDesc != 7 {
		t.Fatalf("by name: %+v, %v", req, err)
	}
	tests := map[string]struct {
		in      []byte
		wantErr string
	}{
		"no headers":       {[]byte{1}, "no ALL_HEADERS"},
		"cut in param":     {good[:len(good)-3], "parameter 3 (\"@p1\""},
		"second RPC":       {append(append([]byte(nil), good...), 0xFF), "a second procedure call"},
		"encrypted param":  {cat(good[:22+6], []byte{0}, []byte{0x08}), "encrypted parameters"},
		"unknown status":   {cat(good[:22+6], []byte{0}, []byte{0x40}), "unknown status flags"},
		"empty proc name":  {cat(good[:22], le16(0)), "procedure name of 0 characters"},
		"bad type":         {cat(good[:22+6], []byte{0, 0, 0x99}), "not supported"},
		"no option flags":  {cat(good[:22], le16(0xFFFF), le16(10)), "OptionFlags"},
		"bad tran header":  {cat(le32(20), le32(16), le16(2), le64(1), le16(0)), "want 18"},
		"value too long":   {executeSQLMessage("x", false, 0, []rpcParamBytes{{"varbinary(max)", cat([]byte{0xA5}, le16(0xFFFF)), cat(le64(1<<30), le32(0))}}), "exceeds the limit"},
		"stmt length lies": {cat(good[:22+6+2], []byte{0xE7}, le16(8000), serverCollation[:], le16(7000)), "ends inside a field"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseRPC(tc.in, 1<<20)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestExecuteSQLArgs(t *testing.T) {
	big := rpcParamBytes{"bigint", []byte{0x26, 8}, cat([]byte{8}, le64(1))}
	tests := map[string]struct {
		msg        []byte
		wantNumber int32
	}{
		"undeclared name": {func() []byte {
			m := executeSQLMessage("SELECT @p1", false, 0, []rpcParamBytes{big})
			return m[:len(m)-len(big.typeInfo)-len(big.value)-1-6-1] // drop the last parameter
		}(), 8178},
		"ok": {executeSQLMessage("SELECT @p1", false, 0, []rpcParamBytes{big}), 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := parseRPC(tc.msg, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = executeSQLArgs(req)
			var se *sqlError
			if tc.wantNumber == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &se) || se.Number != tc.wantNumber {
				t.Fatalf("err = %v, want error %d", err, tc.wantNumber)
			}
		})
	}
}

func TestParseStatementsContract(t *testing.T) {
	bigint := &rpcParam{Name: "@p1", TI: typeInfo{Type: dtIntN, Size: 8}, Val: sqlValue{Len: 8, Data: le64(3)}}
	intp := &rpcParam{Name: "@p1", TI: typeInfo{Type: dtIntN, Size: 4}, Val: sqlValue{Len: 4, Data: le32(3)}}
	vars := func(p *rpcParam) map[string]*rpcParam { return map[string]*rpcParam{"p1": p} }
	tests := map[string]struct {
		text       string
		vars       map[string]*rpcParam
		kind       stmtKind
		wantNumber int32 // 0: accepted
		wantErr    string
	}{
		"series":          {SeriesQuery, vars(bigint), stmtSeries, 0, ""},
		"series lower":    {strings.ToLower(SeriesQuery), vars(bigint), stmtSeries, 0, ""},
		"wide":            {WideRowsQuery, vars(bigint), stmtSeries, 0, ""},
		"wide spaced":     {strings.ReplaceAll(WideRowsQuery, " ", "\n  "), vars(bigint), stmtSeries, 0, ""},
		"series int":      {SeriesQuery, vars(intp), 0, 5373, ""},
		"series literal":  {"SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), 10)", nil, 0, 5373, ""},
		"series int both": {"SELECT value FROM GENERATE_SERIES(1, 10)", nil, 0, 50000, "bigint series only"},
		"series step":     {"SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1, CAST(1 AS bigint))", vars(bigint), 0, 50000, "step"},
		"series huge":     {"SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), CAST(10000001 AS bigint))", nil, 0, 50000, "10000000 rows"},
		"undeclared":      {"SELECT @p2", vars(bigint), 0, 137, ""},
		"create":          {createBulkTable, nil, stmtCreateTable, 0, ""},
		"create perm":     {"CREATE TABLE t (id int)", nil, 0, 50000, "temporary tables"},
		"create pk":       {"CREATE TABLE #t (id int PRIMARY KEY)", nil, 0, 50000, "constraints"},
		"create twice":    {"CREATE TABLE #t (id int, ID int)", nil, 0, 50000, "given twice"},
		"insert bulk":     {"INSERT BULK [#t] ([id] int, [name] nvarchar(50) COLLATE Latin1_General_CI_AS) WITH (TABLOCK, ROWS_PER_BATCH = 5)", nil, stmtInsertBulk, 0, ""},
		"count":           {"select count(*) from #T", nil, stmtCount, 0, ""},
		"checksum":        {"SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM #t", nil, stmtCount, 0, ""},
		"meta":            {"select * from [#t] SET FMTONLY OFF", nil, stmtTableMeta, 0, ""},
		"datalength":      {"SELECT DATALENGTH(@p1)", vars(bigint), stmtSelect, 0, ""},
		"nocount":         {"SET NOCOUNT ON", nil, stmtSet, 0, ""},
		"nocount bad":     {"SET NOCOUNT MAYBE", nil, 0, 50000, "ON or OFF"},
		"varchar(9000)":   {"CREATE TABLE #t (v varchar(9000))", nil, 0, 50000, "out of range"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st, err := parseStatements(tc.text, tc.vars)
			if tc.wantNumber == 0 {
				if err != nil || st[0].kind != tc.kind {
					t.Fatalf("got %+v, %v", st, err)
				}
				return
			}
			var se *sqlError
			switch {
			case tc.wantNumber == 50000 && (!errors.Is(err, errUnsupported) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			case tc.wantNumber != 50000 && (!errors.As(err, &se) || se.Number != tc.wantNumber):
				t.Fatalf("err = %v, want error %d", err, tc.wantNumber)
			}
		})
	}
}

func TestParseParamDecls(t *testing.T) {
	d, err := parseParamDecls("@p1 bigint,@p2 nvarchar(4000), @P3 decimal(18, 4) OUTPUT, @x varbinary(max), @t datetime2(3), @f float(24)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range d {
		got = append(got, p.Name+" "+p.TI.decl())
	}
	want := "[@p1 bigint @p2 nvarchar(4000) @P3 decimal(18,4) @x varbinary(max) @t datetime2(3) @f real]"
	if s := strings.Join(strings.Fields(strings.Trim(strings.Join(got, "|"), "|")), " "); "["+strings.ReplaceAll(s, "|", " ")+"]" != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	for _, bad := range []string{"p1 int", "@p1", "@p1 int @p2 int", "@p1 sql_variant"} {
		if _, err := parseParamDecls(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// bulkMessage builds a BULK_LOAD payload for the contract's table with the given rows.
func bulkMessage(rows ...[]byte) []byte {
	b := cat([]byte{tokenColMetadata}, le16(2),
		le32(0), le16(0), []byte{0x38}, []byte{2}, ucs2.Append(nil, "id"),
		le32(0), le16(1), []byte{0xE7}, le16(100), serverCollation[:], []byte{4}, ucs2.Append(nil, "name"))
	for _, r := range rows {
		b = cat(b, []byte{tokenRow}, r)
	}
	return cat(b, []byte{tokenDone}, le16(0), le16(0), le64(0))
}

func TestDecodeBulkLoad(t *testing.T) {
	table := &tempTable{name: "#t", cols: []tableColumn{
		{Name: "id", TI: typeInfo{Type: dtIntN, Size: 4}, NotNull: true},
		{Name: "name", TI: typeInfo{Type: dtNVarChar, Size: 100, Collation: serverCollation}},
	}}
	target := &bulkTarget{table: table, cols: []int{0, 1}}
	row := func(id uint32, name string) []byte {
		u := ucs2.Append(nil, name)
		return cat(le32(id), le16(uint16(len(u))), u)
	}
	res, err := decodeBulkLoad(wire(bulkMessage(row(1, "a"), row(2, "b"), cat(le32(3), le16(0xFFFF)))), target)
	if err != nil || res.rows != 3 || res.sum != 6 || res.sumRows != 3 {
		t.Fatalf("good load: %+v, %v", res, err)
	}
	notNullName := &bulkTarget{table: &tempTable{name: "#n", cols: []tableColumn{table.cols[0], {Name: "name", TI: table.cols[1].TI, NotNull: true}}}, cols: []int{0, 1}}
	tests := map[string]struct {
		msg     []byte
		target  *bulkTarget
		wantErr string
	}{
		"NULL in NOT NULL": {bulkMessage(cat(le32(3), le16(0xFFFF))), notNullName, "Cannot insert the value NULL into column 'name'"},
		"name too long":    {bulkMessage(row(1, strings.Repeat("x", 51))), target, "row 1 column name"},
		"no DONE":          {bulkMessage(row(1, "a"))[:len(bulkMessage(row(1, "a")))-13], target, "no DONE"},
		"after DONE":       {append(bulkMessage(), 0), target, "bytes after DONE"},
		"bad token":        {cat(bulkMessage()[:len(bulkMessage())-13], []byte{0xAA}), target, "token 0xAA"},
		"no COLMETADATA":   {[]byte{tokenRow}, target, "want COLMETADATA"},
		"column count":     {cat([]byte{tokenColMetadata}, le16(1)), target, "has 1 columns"},
		"column type":      {bytes.Replace(bulkMessage(), []byte{0x38, 2}, []byte{0x7F, 2}, 1), target, "is bigint, the table has int"},
		"column name":      {bytes.Replace(bulkMessage(), ucs2.Append(nil, "id"), ucs2.Append(nil, "ix"), 1), target, "is \"ix\""},
		"row cut":          {bulkMessage(row(1, "a"))[:len(bulkMessage())-13+8], target, "row 1 column name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decodeBulkLoad(wire(tc.msg), tc.target)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzParseRPC(f *testing.F) {
	f.Add(executeSQLMessage("SELECT @p1", false, 0, echoParams[:3]))
	f.Add(executeSQLMessage("SELECT @p1, @p2", true, 1, echoParams[10:14]))
	f.Add(executeSQLMessage(SeriesQuery, false, 0, echoParams[4:5]))
	f.Add(executeSQLMessage("SELECT @p1, @p2, @p3, @p4, @p5", false, 0, legacyParams))
	f.Add(procMessage(procIDPrepExec, intParam(rpcParamByRef, 0, true), ntextParam("@P1 INT"), ntextParam("SELECT @P1"), intParam(0, 42, false)))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parseRPC(b, 1<<20)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "RPC: ") {
				t.Fatalf("error without the RPC: prefix: %v", err)
			}
			return
		}
		var n int64
		for _, p := range req.Params {
			n += p.Val.Len
		}
		if n > int64(len(b)) {
			t.Fatalf("%d value bytes from a %d-byte message", n, len(b))
		}
		if text, vars, err := executeSQLArgs(req); err == nil {
			_, _ = parseStatements(text, vars)
		}
		if len(req.Params) >= 3 { // as sp_prepexec: @handle, @params, @stmt, values
			p := preparedStmt{params: req.Params[1], stmt: req.Params[2]}
			if text, vars, err := executeSQLArgs(p.request(req.Params[3:])); err == nil {
				_, _ = parseStatements(text, vars)
			}
		}
	})
}

func FuzzDecodeBulkLoad(f *testing.F) {
	table := &tempTable{name: "#t", cols: []tableColumn{
		{Name: "id", TI: typeInfo{Type: dtIntN, Size: 4}, NotNull: true},
		{Name: "name", TI: typeInfo{Type: dtNVarChar, Size: 100, Collation: serverCollation}},
	}}
	f.Add(bulkMessage(cat(le32(1), le16(2), []byte{'a', 0})))
	f.Add(bulkMessage())
	f.Add(bulkMessage(cat(le32(3), le16(0xFFFF)), cat(le32(4), le16(0))))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := decodeBulkLoad(wire(b), &bulkTarget{table: table, cols: []int{0, 1}})
		if err == nil && res.rows*5 > int64(len(b)) {
			t.Fatalf("%d rows from %d bytes", res.rows, len(b))
		}
	})
}

func TestDecimalFits(t *testing.T) {
	tests := []struct {
		mag  []byte
		prec uint8
		want bool
	}{
		{le32(9999), 4, true},
		{le32(10000), 4, false},
		{le64(999999999999999999), 18, true},
		{le64(1000000000000000000), 18, false},
		{le64(1<<64 - 1), 20, true},
		{cat(le64(0), le64(1)), 20, true},      // 2^64 < 10^20
		{cat(le64(0), le64(1)), 19, false},     // 2^64 >= 10^19
		{cat(le64(0), le64(1<<63)), 38, false}, // 2^127 >= 10^38
	}
	for _, tc := range tests {
		if got := decimalFits(tc.mag, tc.prec); got != tc.want {
			t.Errorf("decimalFits(%x, %d) = %v", tc.mag, tc.prec, got)
		}
	}
}

func FuzzParseParamDecls(f *testing.F) {
	for _, s := range []string{"@p1 bigint,@p2 nvarchar(4000)", "@P1 DECIMAL(18, 4) OUTPUT", "@x varbinary(max), @t datetime2(3)", "@a float(24)", "@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseParamDecls(s)
		if err != nil {
			if !errors.Is(err, errUnsupported) {
				t.Fatalf("error %v does not wrap errUnsupported", err)
			}
			return
		}
		for _, p := range d {
			if !strings.HasPrefix(p.Name, "@") || p.TI.decl() == "" {
				t.Fatalf("declaration %+v", p)
			}
			if _, err := readTypeInfo(wire(appendTypeInfo(nil, p.TI))); err != nil {
				t.Fatalf("declared type %s does not survive TYPE_INFO: %v", p.TI.decl(), err)
			}
		}
	})
}

// typeInfoCase is a TYPE_INFO to decode: the bytes, and the typeInfo they give or an error text.
type typeInfoCase struct {
	in      []byte
	want    typeInfo
	wantErr string
}

// runTypeInfoCases decodes each case, checks the result or the error, and that a decoded
// TYPE_INFO encodes back to its bytes.
func runTypeInfoCases(t *testing.T, tests map[string]typeInfoCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := readTypeInfo(wire(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if re := appendTypeInfo(nil, got); !bytes.Equal(re, tc.in) {
				t.Fatalf("re-encoded %x, want %x", re, tc.in)
			}
		})
	}
}

// valueCase is a value of type ti to decode: the bytes, and the value they give or an error text.
type valueCase struct {
	ti      typeInfo
	in      []byte
	want    sqlValue
	wantErr string
}

// runValueCases decodes each case with a 1 MiB limit and checks the result or the error.
func runValueCases(t *testing.T, tests map[string]valueCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := readValue(wire(tc.in), tc.ti, true, 1<<20)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.Null != tc.want.Null || got.Len != tc.want.Len || !bytes.Equal(got.Data, tc.want.Data) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
