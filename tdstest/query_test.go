package tdstest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

func TestParseBatch(t *testing.T) {
	sess := newSession(57)
	tedious := "set textsize 2147483647\nset quoted_identifier on\nset arithabort off\nset numeric_roundabort off\n" +
		"set ansi_warnings on\nset ansi_padding on\nset ansi_nulls on\nset concat_null_yields_null on\n" +
		"set cursor_close_on_commit off\nset implicit_transactions off\nset language us_english\n" +
		"set dateformat mdy\nset datefirst 7\nset transaction isolation level read committed"
	tests := map[string]struct {
		batch string
		want  []stmtKind
		check func(t *testing.T, st []statement)
	}{
		"select 1": {batch: "SELECT 1", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			if v := st[0].vals[0]; v.col.TI.Type != dtInt4 || !v.col.NotNull || leInt(v.sv.Data) != 1 || v.col.Name != "" {
				t.Errorf("value %+v", v)
			}
		}},
		"lower case, spaces, semicolon": {batch: "  select\t1 ;", want: []stmtKind{stmtSelect}},
		"negative and alias": {batch: "SELECT -42 AS answer, 7 seven", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			v := st[0].vals
			if len(v) != 2 || leInt(v[0].sv.Data) != -42 || v[0].col.Name != "answer" || leInt(v[1].sv.Data) != 7 || v[1].col.Name != "seven" {
				t.Errorf("values %+v", v)
			}
		}},
		"nvarchar max": {batch: "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 524288)", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			v := st[0].vals[0]
			if v.col.TI.Type != dtNVarChar || !v.col.TI.isPLP() || string(v.unit) != "x\x00" || v.n != 524288 {
				t.Errorf("value %+v", v)
			}
		}},
		"nvarchar max, quotes and non-ASCII": {batch: "select replicate(cast(N'it''s é' as NVARCHAR(MAX)), 3)", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			v := st[0].vals[0]
			if ucs2.Decode(v.unit) != "it's é" || v.n != 3 {
				t.Errorf("value %q x %d", ucs2.Decode(v.unit), v.n)
			}
		}},
		"varbinary max": {batch: "SELECT CAST(REPLICATE(CAST('ab' AS varchar(max)), 10) AS varbinary(max))", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			v := st[0].vals[0]
			if v.col.TI.Type != dtBigVarBinary || !v.col.TI.isPLP() || string(v.unit) != "ab" || v.n != 10 {
				t.Errorf("value %+v", v)
			}
		}},
		"spid": {batch: "select @@spid", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			if v := st[0].vals[0].resolve(&sess); v.col.TI == nil || v.col.TI.Type != dtInt2 || leInt(v.sv.Data) != 57 {
				t.Errorf("spid %+v, want smallint 57", v)
			}
		}},
		"version and servername": {batch: "SELECT @@VERSION, @@SERVERNAME", want: []stmtKind{stmtSelect}},
		"java connect batch":     {batch: javaConnectBatch, want: []stmtKind{stmtSelect, stmtSet, stmtSet, stmtSet, stmtSet}},
		"type info": {batch: "sp_datatype_info_100 -9,3; EXEC sp_datatype_info 0", want: []stmtKind{stmtDataTypeInfo, stmtDataTypeInfo}, check: func(t *testing.T, st []statement) {
			if r := st[0].typeRows; len(r) != 2 || r[0].name != "nvarchar" || r[0].precision != 4000 || r[1].name != "sysname" {
				t.Errorf("rows for SQL_WVARCHAR: %+v", r)
			}
			if len(st[1].typeRows) != len(typeInfoRows) {
				t.Errorf("type 0 gave %d rows, want all %d", len(st[1].typeRows), len(typeInfoRows))
			}
		}},
		"server property cast": {batch: "SELECT CAST(SERVERPROPERTY('ProductMajorVersion') AS int), CAST(SERVERPROPERTY('Edition') AS nvarchar(9)), CAST(SERVERPROPERTY('x') AS sysname)", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			v := st[0].vals
			if leInt(v[0].sv.Data) != 16 || ucs2.Decode(v[1].sv.Data) != "Developer" || !v[2].sv.Null || v[2].col.TI.Size != 256 {
				t.Errorf("values %+v", v)
			}
		}},
		"db_name": {batch: "SELECT DB_NAME()", want: []stmtKind{stmtSelect}, check: func(t *testing.T, st []statement) {
			if v := st[0].vals[0].resolve(&sess); ucs2.Decode(v.sv.Data) != "master" {
				t.Errorf("DB_NAME() = %q", ucs2.Decode(v.sv.Data))
			}
		}},
		"nstring":         {batch: "SELECT N'hello'", want: []stmtKind{stmtSelect}},
		"tedious connect": {batch: tedious, want: []stmtKind{stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet, stmtSet}},
		"set then select": {batch: "SET NOCOUNT ON; SELECT 1", want: []stmtKind{stmtSet, stmtSelect}},
		"use":             {batch: "USE [tempdb]", want: []stmtKind{stmtUse}},
		"transactions":    {batch: "BEGIN TRAN; COMMIT TRAN; ROLLBACK", want: []stmtKind{stmtTran, stmtTran, stmtTran}},
		"comments":        {batch: "-- hello\n/* block */ SELECT 1 -- trailing", want: []stmtKind{stmtSelect}},
		"empty":           {batch: " ; ", want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st, err := parseBatch(tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != len(tc.want) {
				t.Fatalf("%d statements, want %d", len(st), len(tc.want))
			}
			for i := range st {
				if st[i].kind != tc.want[i] {
					t.Errorf("statement %d kind %d, want %d", i, st[i].kind, tc.want[i])
				}
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

func TestParseBatchUnsupported(t *testing.T) {
	tests := map[string]string{
		"from":             "SELECT 1 FROM sys.objects",
		"table":            "SELECT name FROM sys.databases",
		"insert":           "INSERT INTO t VALUES (1)",
		"unterminated":     "SELECT N'abc",
		"comment":          "SELECT 1 /* open",
		"bracket":          "USE [master",
		"overflow":         "SELECT 4294967296",
		"replicate no max": "SELECT REPLICATE(CAST(N'x' AS nvarchar(10)), 5)",
		"huge":             "SELECT REPLICATE(CAST(N'xx' AS nvarchar(max)), 2147483647)",
		"non-ascii bytes":  "SELECT CAST(REPLICATE(CAST('é' AS varchar(max)), 2) AS varbinary(max))",
		"unknown var":      "SELECT @@FOO",
		"gibberish":        "!!",
		"begin alone":      "BEGIN",
		"waitfor time":     "WAITFOR TIME '10:00'",
		"waitfor 24h":      "WAITFOR DELAY '24:00:00'",
		"waitfor minutes":  "WAITFOR DELAY '00:60:00'",
		"waitfor number":   "WAITFOR DELAY 5",
		"type info char":   "sp_datatype_info_100 1,3",
		"exec other proc":  "EXEC sp_who",
		"db_name(1)":       "SELECT DB_NAME(1)",
		"property no arg":  "SELECT SERVERPROPERTY()",
		"cast property":    "SELECT CAST(SERVERPROPERTY('ProductVersion') AS datetime)",
		"cast to max":      "SELECT CAST(SERVERPROPERTY('Edition') AS nvarchar(max))",
	}
	for name, batch := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseBatch(batch)
			if !errors.Is(err, errUnsupported) {
				t.Fatalf("err = %v, want errUnsupported", err)
			}
			if !strings.Contains(err.Error(), "tdstest") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{"SELECT 1", "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 5)", "set a b; select @@spid", "/*", "N'",
		SeriesQuery, WideRowsQuery, createBulkTable, "SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM #t",
		"INSERT BULK [#t] ([id] int, [name] nvarchar(50)) WITH (TABLOCK)", "SET NOCOUNT ON; SELECT DATALENGTH(@p1)",
		javaConnectBatch, "SELECT SERVERPROPERTY('ProductVersion'), CAST(SERVERPROPERTY('EngineEdition') AS int), SUSER_SNAME(), SYSTEM_USER",
		"sp_datatype_info_100 12,3", "EXEC sp_datatype_info 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseBatch(s)
		if err != nil && !errors.Is(err, errUnsupported) {
			t.Fatalf("error %v does not wrap errUnsupported", err)
		}
		for _, x := range st {
			for _, v := range x.vals {
				if _, err := plpSize(v.unit, v.n); err != nil {
					t.Fatalf("accepted an oversized value: %v", err)
				}
			}
		}
	})
}

func TestBatchText(t *testing.T) {
	text, _, err := batchText(batchMessage("SELECT 1"))
	if err != nil || text != "SELECT 1" {
		t.Fatalf("batchText = %q, %v", text, err)
	}
	for name, p := range map[string][]byte{
		"short":           {1, 0},
		"total too big":   {0xFF, 0, 0, 0},
		"total too small": {2, 0, 0, 0, 'x', 0},
		"header short":    {8, 0, 0, 0, 1, 2, 3, 4},
		"header length":   {10, 0, 0, 0, 9, 0, 0, 0, 2, 0},
		"odd text":        {4, 0, 0, 0, 'x'},
	} {
		if _, _, err := batchText(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzBatchText(f *testing.F) {
	f.Add(batchMessage("SELECT 1"))
	f.Add([]byte{4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, p []byte) {
		text, _, err := batchText(p)
		if err == nil && len(text) > 3*len(p) {
			t.Fatalf("text of %d bytes from %d", len(text), len(p))
		}
	})
}

func TestParseDelay(t *testing.T) {
	tests := map[string]struct {
		in   string
		want time.Duration
		ok   bool
	}{
		"hh:mm":            {"01:02", time.Hour + 2*time.Minute, true},
		"hh:mm:ss":         {"00:00:20", 20 * time.Second, true},
		"milliseconds":     {"00:00:00.05", 50 * time.Millisecond, true},
		"three digits":     {"00:00:01.250", 1250 * time.Millisecond, true},
		"largest":          {"23:59:59.999", 24*time.Hour - time.Millisecond, true},
		"fraction on mm":   {"00:01.5", 0, false},
		"hours 24":         {"24:00:00", 0, false},
		"seconds 60":       {"00:00:60", 0, false},
		"four digit frac":  {"00:00:00.1234", 0, false},
		"empty fraction":   {"00:00:01.", 0, false},
		"three digit part": {"000:00:01", 0, false},
		"negative":         {"-1:00:00", 0, false},
		"words":            {"soon", 0, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := parseDelay(tc.in)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Fatalf("parseDelay(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
