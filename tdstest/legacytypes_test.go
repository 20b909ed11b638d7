package tdstest

import (
	"bytes"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/tds"
)

// TestReadTypeInfoLegacy: the legacy TYPE_INFO forms of MS-TDS 2.2.5.4 decode, re-encode byte
// for byte, and bad ones are refused naming the type and offset.
func TestReadTypeInfoLegacy(t *testing.T) {
	tests := map[string]typeInfoCase{
		"TEXT":             {cat([]byte{0x23}, le32(maxLongLen), serverCollation[:]), typeInfo{Type: dtText, Size: maxLongLen, Collation: serverCollation}, ""},
		"NTEXT":            {cat([]byte{0x63}, le32(0x30), serverCollation[:]), typeInfo{Type: dtNText, Size: 0x30, Collation: serverCollation}, ""},
		"IMAGE":            {cat([]byte{0x22}, le32(16)), typeInfo{Type: dtImage, Size: 16}, ""},
		"VARCHAR":          {[]byte{0x27, 50}, typeInfo{Type: dtVarChar, Size: 50}, ""},
		"CHAR":             {[]byte{0x2F, 10}, typeInfo{Type: dtChar, Size: 10}, ""},
		"VARBINARY":        {[]byte{0x25, 255}, typeInfo{Type: dtVarBinary, Size: 255}, ""},
		"BINARY":           {[]byte{0x2D, 4}, typeInfo{Type: dtBinary, Size: 4}, ""},
		"DECIMAL 38,2":     {[]byte{0x37, 17, 38, 2}, typeInfo{Type: dtDecimal, Size: 17, Prec: 38, Scale: 2}, ""},
		"NUMERIC 9,0":      {[]byte{0x3F, 5, 9, 0}, typeInfo{Type: dtNumeric, Size: 5, Prec: 9}, ""},
		"TEXT 2 GiB":       {cat([]byte{0x23}, le32(1<<31), serverCollation[:]), typeInfo{}, "TYPE_INFO TEXTTYPE at offset 0: length 2147483648"},
		"NTEXT no coll":    {cat([]byte{0x63}, le32(2), []byte{9, 4}), typeInfo{}, "collation"},
		"IMAGE cut":        {[]byte{0x22, 1, 0}, typeInfo{}, "ends inside a field"},
		"VARCHAR cut":      {[]byte{0x27}, typeInfo{}, "VARCHARTYPE"},
		"DECIMAL prec 0":   {[]byte{0x37, 5, 0, 0}, typeInfo{}, "precision 0"},
		"NUMERIC length 6": {[]byte{0x3F, 6, 9, 0}, typeInfo{}, "length 6 not valid"},
		"sql_variant":      {cat([]byte{0x62}, le32(8009)), typeInfo{}, "not supported"},
	}
	runTypeInfoCases(t, tests)
}

// TestReadValueLegacy: values of the legacy types, NULL of each, and lengths that lie.
func TestReadValueLegacy(t *testing.T) {
	ntext := typeInfo{Type: dtNText, Size: 8, Collation: serverCollation}
	image := typeInfo{Type: dtImage, Size: maxLongLen}
	varchar := typeInfo{Type: dtVarChar, Size: 5}
	dec := typeInfo{Type: dtDecimal, Size: 9, Prec: 18, Scale: 2}
	tests := map[string]valueCase{
		"ntext":             {ntext, cat(le32(4), ucs2.Append(nil, "hé")), sqlValue{Len: 4, Data: ucs2.Append(nil, "hé")}, ""},
		"ntext NULL":        {ntext, le32(0xFFFFFFFF), sqlValue{Null: true}, ""},
		"ntext empty":       {ntext, le32(0), sqlValue{Data: []byte{}}, ""},
		"ntext odd":         {ntext, cat(le32(3), []byte{1, 2, 3}), sqlValue{}, "odd byte count 3"},
		"ntext over decl":   {ntext, cat(le32(10), make([]byte, 10)), sqlValue{}, "exceeds the declared 8"},
		"ntext cut":         {ntext, cat(le32(4), []byte{1}), sqlValue{}, "ends inside a field"},
		"image over limit":  {image, cat(le32(2<<20), make([]byte, 16)), sqlValue{}, "exceeds the limit of 1048576"},
		"image 2 GiB":       {image, le32(1 << 31), sqlValue{}, "want at most 2147483647"},
		"varchar":           {varchar, cat([]byte{3}, []byte("abc")), sqlValue{Len: 3, Data: []byte("abc")}, ""},
		"varchar NULL":      {varchar, []byte{0}, sqlValue{Null: true}, ""},
		"varchar too long":  {varchar, cat([]byte{6}, []byte("abcdef")), sqlValue{}, "length 6, want 1..5"},
		"decimal":           {dec, cat([]byte{9, 1}, le64(12345)), sqlValue{Len: 9, Data: cat([]byte{1}, le64(12345))}, ""},
		"decimal bad sign":  {dec, cat([]byte{9, 3}, le64(1)), sqlValue{}, "sign byte 3"},
		"decimal too short": {dec, cat([]byte{4, 1}, le32(1)[:3]), sqlValue{}, "length 4, want 5..9"},
	}
	runValueCases(t, tests)
}

// legacyParams are parameters of the legacy types as a client sends them: ntext "hé", text NULL,
// image {1, 2, 3}, VARCHARTYPE(10) "abc", DECIMALTYPE(18,2) 123.45.
var legacyParams = []rpcParamBytes{
	{"ntext", cat([]byte{0x63}, le32(maxLongLen-1), serverCollation[:]), cat(le32(4), ucs2.Append(nil, "hé"))},
	{"text", cat([]byte{0x23}, le32(maxLongLen), serverCollation[:]), le32(0xFFFFFFFF)},
	{"image", cat([]byte{0x22}, le32(maxLongLen)), cat(le32(3), []byte{1, 2, 3})},
	{"varchar(10)", []byte{0x27, 10}, cat([]byte{3}, []byte("abc"))},
	{"decimal(18,2)", []byte{0x37, 9, 18, 2}, cat([]byte{9, 1}, le64(12345))},
}

// TestRPCLegacyEcho: parameters of the legacy types run through sp_executesql and come back as
// SQL Server returns such variables: text, ntext and image with a text pointer and timestamp in
// the ROW and a TableName in COLMETADATA; the TDS 4.2 short forms as their BIG or N types.
func TestRPCLegacyEcho(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	params := legacyParams
	hi := ucs2.Append(nil, "hé")
	resp, err := c.rpc(executeSQLMessage("SELECT @p1, @p2, @p3, @p4, @p5, DATALENGTH(@p1)", false, 0, params))
	if err != nil {
		t.Fatal(err)
	}
	col := func(ti ...[]byte) []byte { return cat(le32(0), le16(colFlagNullable), cat(ti...), []byte{0}) }
	textValue := func(data []byte) []byte {
		return cat([]byte{16}, textPointer[:], make([]byte, 8), le32(uint32(len(data))), data)
	}
	want := cat([]byte{tokenColMetadata}, le16(6),
		col(params[0].typeInfo, []byte{0}), // TableName: NumParts 0
		col(params[1].typeInfo, []byte{0}),
		col(params[2].typeInfo, []byte{0}),
		col([]byte{0xA7}, le16(10), serverCollation[:]), // varchar(10)
		col([]byte{0x6A, 9, 18, 2}),                     // decimal(18,2)
		col([]byte{0x26, 4}),                            // DATALENGTH: int
		[]byte{tokenRow}, textValue(hi), []byte{0}, textValue([]byte{1, 2, 3}),
		le16(3), []byte("abc"), []byte{9, 1}, le64(12345), []byte{4}, le32(4),
		[]byte{tokenDoneInProc}, le16(doneMore|doneCount), le16(curCmdSelect), le64(1),
		[]byte{tokenReturnStatus}, le32(0), []byte{tokenDoneProc}, le16(0), le16(curCmdExecute), le64(0))
	if !bytes.Equal(resp, want) {
		t.Fatalf("response\n%x\nwant\n%x", resp, want)
	}
}

// TestMaxAsLongTypesBeforeTDS72: a login before TDS 7.2 gets (max) columns as SQL Server sends
// them to it (MS-TDS 2.2.5.4.3): nvarchar(max) as ntext, varbinary(max) as image, with LONGLEN
// lengths and an empty TableName in COLMETADATA and a text pointer and timestamp before each
// value; at 7.0 without collation. A 7.2 login gets the same query as PLP.
func TestMaxAsLongTypesBeforeTDS72(t *testing.T) {
	const query = "SELECT REPLICATE(CAST(N'ab' AS nvarchar(max)), 3) AS v, " +
		"CAST(REPLICATE(CAST('xy' AS varchar(max)), 2) AS varbinary(max)), REPLICATE(CAST(N'z' AS nvarchar(max)), 0)"
	long := func(data []byte) []byte {
		return cat([]byte{16}, textPointer[:], // TextPointer: B_VARBYTE of 16 bytes
			make([]byte, 8),               // Timestamp
			le32(uint32(len(data))), data) // LONGLEN length, data
	}
	row := cat([]byte{tokenRow}, long(ucs2.Append(nil, "ababab")), long([]byte("xyxy")), long(nil))
	meta := func(collation []byte) []byte {
		return cat([]byte{tokenColMetadata}, le16(3),
			le16(0), le16(colFlagNullable), []byte{0x63}, le32(0x7FFFFFFE), collation, // UserType u16, Flags, NTEXTTYPE, max length
			le16(0), []byte{1, 'v', 0}, // TableName: empty US_VARCHAR; column name "v"
			le16(0), le16(colFlagNullable), []byte{0x22}, le32(0x7FFFFFFF), // IMAGETYPE, max length, no collation
			le16(0), []byte{0}, // TableName, no column name
			le16(0), le16(colFlagNullable), []byte{0x63}, le32(0x7FFFFFFE), collation,
			le16(0), []byte{0})
	}
	done := cat([]byte{tokenDone}, le16(doneCount), le16(curCmdSelect), le32(1)) // 32-bit row count
	tests := []struct {
		name    string
		version uint32
		want    []byte
	}{
		{"7.0", verTDS70, cat(meta(nil), row, done)},
		{"7.1", verTDS71, cat(meta(serverCollation[:]), row, done)},
		{"7.1 revision 1", verTDS71A, cat(meta(serverCollation[:]), row, done)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startServer(t, Config{Encryption: EncryptNotSup})
			c := dialPlain(t, s)
			l := goodLogin7()
			l.version = tc.version
			if _, err := c.roundTrip(tds.TypeLogin7, encodeLogin7(l)); err != nil {
				t.Fatal(err)
			}
			resp, err := c.roundTrip(tds.TypeSQLBatch, ucs2.Append(nil, query))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(resp, tc.want) {
				t.Fatalf("response\n got %x\nwant %x", resp, tc.want)
			}
		})
	}
}

// TestWriteLongRepeat: a long value larger than one chunk comes out whole, after its header.
func TestWriteLongRepeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		unit []byte
		n    int64
	}{
		{"empty", []byte("x"), 0},
		{"one chunk", []byte("ab"), 7},
		{"many chunks", []byte("abc"), 10_000},
		{"unit above the chunk size", bytes.Repeat([]byte{7}, plpChunkTarget+1), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			if err := writeLongRepeat(&w, tc.unit, tc.n); err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat(tc.unit, int(tc.n))
			want := cat([]byte{16}, textPointer[:], make([]byte, 8), le32(uint32(len(data))), data)
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("%d bytes, want %d", w.Len(), len(want))
			}
		})
	}
}
