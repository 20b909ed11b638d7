package tdstest

import (
	"encoding/binary"
	"fmt"
)

// dataType is a TDS data type byte of TYPE_INFO (MS-TDS 2.2.5.4).
type dataType uint8

// The data types tdstest decodes in RPC parameters and BULK_LOAD rows and writes in results.
const (
	dtNull           dataType = 0x1F // NULLTYPE: go-mssqldb's nil parameter, no value bytes
	dtInt1           dataType = 0x30
	dtBit            dataType = 0x32
	dtInt2           dataType = 0x34
	dtInt4           dataType = 0x38
	dtDateTime4      dataType = 0x3A
	dtFlt4           dataType = 0x3B
	dtMoney          dataType = 0x3C
	dtDateTime       dataType = 0x3D
	dtFlt8           dataType = 0x3E
	dtMoney4         dataType = 0x7A
	dtInt8           dataType = 0x7F
	dtGUID           dataType = 0x24
	dtIntN           dataType = 0x26
	dtDateN          dataType = 0x28
	dtTimeN          dataType = 0x29
	dtDateTime2N     dataType = 0x2A
	dtDateTimeOffset dataType = 0x2B
	dtBitN           dataType = 0x68
	dtDecimalN       dataType = 0x6A
	dtNumericN       dataType = 0x6C
	dtFltN           dataType = 0x6D
	dtMoneyN         dataType = 0x6E
	dtDateTimeN      dataType = 0x6F
	dtBigVarBinary   dataType = 0xA5
	dtBigVarChar     dataType = 0xA7
	dtBigBinary      dataType = 0xAD
	dtBigChar        dataType = 0xAF
	dtNVarChar       dataType = 0xE7
	dtNChar          dataType = 0xEF

	// Legacy forms (MS-TDS 2.2.5.4) that drivers still send in RPC parameters: the BYTELEN
	// character, binary and decimal types of TDS 4.2 and the LONGLEN text types.
	dtImage     dataType = 0x22
	dtText      dataType = 0x23
	dtVarBinary dataType = 0x25
	dtVarChar   dataType = 0x27
	dtBinary    dataType = 0x2D
	dtChar      dataType = 0x2F
	dtDecimal   dataType = 0x37
	dtNumeric   dataType = 0x3F
	dtNText     dataType = 0x63
	// dtVariant is sql_variant, written in results (SERVERPROPERTY) only.
	dtVariant dataType = 0x62
)

var dataTypeNames = map[dataType]string{
	dtNull: "NULLTYPE", dtInt1: "INT1TYPE", dtBit: "BITTYPE", dtInt2: "INT2TYPE", dtInt4: "INT4TYPE",
	dtDateTime4: "DATETIM4TYPE", dtFlt4: "FLT4TYPE", dtMoney: "MONEYTYPE", dtDateTime: "DATETIMETYPE",
	dtFlt8: "FLT8TYPE", dtMoney4: "MONEY4TYPE", dtInt8: "INT8TYPE", dtGUID: "GUIDTYPE", dtIntN: "INTNTYPE",
	dtDateN: "DATENTYPE", dtTimeN: "TIMENTYPE", dtDateTime2N: "DATETIME2NTYPE",
	dtDateTimeOffset: "DATETIMEOFFSETNTYPE", dtBitN: "BITNTYPE", dtDecimalN: "DECIMALNTYPE",
	dtNumericN: "NUMERICNTYPE", dtFltN: "FLTNTYPE", dtMoneyN: "MONEYNTYPE", dtDateTimeN: "DATETIMNTYPE",
	dtBigVarBinary: "BIGVARBINARYTYPE", dtBigVarChar: "BIGVARCHARTYPE", dtBigBinary: "BIGBINARYTYPE",
	dtBigChar: "BIGCHARTYPE", dtNVarChar: "NVARCHARTYPE", dtNChar: "NCHARTYPE",
	dtImage: "IMAGETYPE", dtText: "TEXTTYPE", dtVarBinary: "VARBINARYTYPE", dtVarChar: "VARCHARTYPE",
	dtBinary: "BINARYTYPE", dtChar: "CHARTYPE", dtDecimal: "DECIMALTYPE", dtNumeric: "NUMERICTYPE",
	dtNText: "NTEXTTYPE", dtVariant: "SSVARIANTTYPE",
}

func (t dataType) String() string {
	if s, ok := dataTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("dataType(0x%02X)", uint8(t))
}

// fixedSize is the value size of a fixed-length type, or -1 for the others.
func (t dataType) fixedSize() int {
	switch t {
	case dtNull:
		return 0
	case dtInt1, dtBit:
		return 1
	case dtInt2:
		return 2
	case dtInt4, dtDateTime4, dtFlt4, dtMoney4:
		return 4
	case dtMoney, dtDateTime, dtFlt8, dtInt8:
		return 8
	}
	return -1
}

// maxVarLen is the largest declared length of a non-(max) variable type, in bytes.
const maxVarLen = 8000

// typeInfo is a decoded TYPE_INFO (MS-TDS 2.2.5.6): everything but the data type's value.
type typeInfo struct {
	Type dataType
	// Size is the length byte or USHORTLEN of variable types (plpMaxLen for (max)), the value
	// size of fixed types, 0 for DATENTYPE and the scaled time types.
	Size      int
	Prec      uint8   // DECIMALN, NUMERICN
	Scale     uint8   // DECIMALN, NUMERICN, TIMEN, DATETIME2N, DATETIMEOFFSETN
	Collation [5]byte // BIGVARCHAR, BIGCHAR, NVARCHAR, NCHAR, TEXT, NTEXT
}

// maxLongLen is the largest LONGLEN of the text types (MS-TDS 2.2.5.4.3: 0 to 2 GB).
const maxLongLen = 0x7FFFFFFF

// isLong reports whether the type is a LONGLEN type (text, ntext, image, sql_variant).
func (t dataType) isLong() bool {
	return t == dtText || t == dtNText || t == dtImage || t == dtVariant
}

// isPLP reports whether values travel as PLP (the (max) types, MS-TDS 2.2.5.2.3).
func (ti typeInfo) isPLP() bool {
	switch ti.Type {
	case dtBigVarBinary, dtBigVarChar, dtNVarChar:
		return ti.Size == plpMaxLen
	}
	return false
}

// lenKind is how a value of the type is prefixed on the wire.
type lenKind uint8

const (
	lenFixed  lenKind = iota // no prefix, typeInfo.Size bytes
	lenByte                  // BYTELEN, 0 = NULL
	lenUShort                // USHORTLEN, 0xFFFF = NULL
	lenPLP                   // PLP
	lenLong                  // LONGLEN, 0xFFFFFFFF = NULL (in results see appendValue)
)

func (ti typeInfo) lenKind() lenKind {
	switch {
	case ti.Type.fixedSize() >= 0:
		return lenFixed
	case ti.isPLP():
		return lenPLP
	case ti.Type.isLong():
		return lenLong
	}
	switch ti.Type {
	case dtBigVarBinary, dtBigVarChar, dtBigBinary, dtBigChar, dtNVarChar, dtNChar:
		return lenUShort
	}
	return lenByte
}

// nullable is the type a nullable result column of ti's type has: fixed types become their
// N-variant of the same size, as SQL Server reports variables and nullable columns.
func (ti typeInfo) nullable() typeInfo {
	n := ti
	switch ti.Type {
	case dtInt1, dtInt2, dtInt4, dtInt8:
		n.Type = dtIntN
	case dtBit:
		n.Type = dtBitN
	case dtFlt4, dtFlt8:
		n.Type = dtFltN
	case dtMoney, dtMoney4:
		n.Type = dtMoneyN
	case dtDateTime, dtDateTime4:
		n.Type = dtDateTimeN
	case dtDecimal:
		n.Type = dtDecimalN
	case dtNumeric:
		n.Type = dtNumericN
	case dtChar, dtVarChar:
		// The legacy character types carry no collation: the server's applies.
		n.Type = map[dataType]dataType{dtChar: dtBigChar, dtVarChar: dtBigVarChar}[ti.Type]
		n.Collation = serverCollation
	case dtBinary:
		n.Type = dtBigBinary
	case dtVarBinary:
		n.Type = dtBigVarBinary
	}
	return n
}

// decimalBytes is the value size (sign byte included) of a decimal of precision p.
func decimalBytes(p uint8) int {
	switch {
	case p <= 9:
		return 5
	case p <= 19:
		return 9
	case p <= 28:
		return 13
	}
	return 17
}

// timeBytes is the size of a time of scale s (MS-TDS 2.2.5.5.1.8).
func timeBytes(s uint8) int {
	switch {
	case s <= 2:
		return 3
	case s <= 4:
		return 4
	}
	return 5
}

// valueSizes returns the value sizes a BYTELEN type accepts besides 0 (NULL).
func (ti typeInfo) valueSizes() (lo, hi int) {
	switch ti.Type {
	case dtDateN:
		return 3, 3
	case dtTimeN:
		return timeBytes(ti.Scale), timeBytes(ti.Scale)
	case dtDateTime2N:
		return timeBytes(ti.Scale) + 3, timeBytes(ti.Scale) + 3
	case dtDateTimeOffset:
		return timeBytes(ti.Scale) + 5, timeBytes(ti.Scale) + 5
	case dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
		return 5, ti.Size
	case dtChar, dtVarChar, dtBinary, dtVarBinary:
		return 1, ti.Size
	case dtGUID:
		return 16, 16
	}
	return ti.Size, ti.Size
}

// declNames are the T-SQL names of the types whose declaration is the name alone.
var declNames = map[dataType]string{
	dtNull: "NULL", dtInt1: "tinyint", dtInt2: "smallint", dtInt4: "int", dtInt8: "bigint",
	dtBit: "bit", dtBitN: "bit", dtFlt4: "real", dtFlt8: "float", dtMoney4: "smallmoney",
	dtMoney: "money", dtDateTime4: "smalldatetime", dtDateTime: "datetime", dtGUID: "uniqueidentifier",
	dtDateN: "date", dtText: "text", dtNText: "ntext", dtImage: "image", dtVariant: "sql_variant",
}

// sizedDeclNames are the names of the nullable types whose declaration their size chooses.
var sizedDeclNames = map[dataType]map[int]string{
	dtIntN:      {1: "tinyint", 2: "smallint", 4: "int", 8: "bigint"},
	dtFltN:      {4: "real", 8: "float"},
	dtMoneyN:    {4: "smallmoney", 8: "money"},
	dtDateTimeN: {4: "smalldatetime", 8: "datetime"},
}

// decl is the T-SQL declaration of the type, for messages.
func (ti typeInfo) decl() string {
	if name, ok := declNames[ti.Type]; ok {
		return name
	}
	if names, ok := sizedDeclNames[ti.Type]; ok {
		return names[ti.Size]
	}
	length := func(name string, unit int) string {
		if ti.Size == plpMaxLen {
			return name + "(max)"
		}
		return fmt.Sprintf("%s(%d)", name, ti.Size/unit)
	}
	switch ti.Type {
	case dtTimeN:
		return fmt.Sprintf("time(%d)", ti.Scale)
	case dtDateTime2N:
		return fmt.Sprintf("datetime2(%d)", ti.Scale)
	case dtDateTimeOffset:
		return fmt.Sprintf("datetimeoffset(%d)", ti.Scale)
	case dtDecimalN, dtDecimal:
		return fmt.Sprintf("decimal(%d,%d)", ti.Prec, ti.Scale)
	case dtNumericN, dtNumeric:
		return fmt.Sprintf("numeric(%d,%d)", ti.Prec, ti.Scale)
	case dtBigVarBinary, dtVarBinary:
		return length("varbinary", 1)
	case dtBigBinary, dtBinary:
		return length("binary", 1)
	case dtBigVarChar, dtVarChar:
		return length("varchar", 1)
	case dtBigChar, dtChar:
		return length("char", 1)
	case dtNVarChar:
		return length("nvarchar", 2)
	case dtNChar:
		return length("nchar", 2)
	}
	return ti.Type.String()
}

// readTypeInfo decodes a TYPE_INFO. Every length, precision and scale is checked; errors name
// the offset and the type.
func readTypeInfo(r *wireReader) (typeInfo, error) {
	at := r.off
	b, err := r.byte()
	if err != nil {
		return typeInfo{}, fmt.Errorf("TYPE_INFO at offset %d: %w", at, err)
	}
	ti := typeInfo{Type: dataType(b)}
	if n := ti.Type.fixedSize(); n >= 0 {
		ti.Size = n
		return ti, nil
	}
	switch ti.Type {
	case dtDateN:
	case dtTimeN, dtDateTime2N, dtDateTimeOffset:
		err = readScale(r, &ti)
	case dtGUID, dtIntN, dtBitN, dtFltN, dtMoneyN, dtDateTimeN, dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
		err = readByteLenType(r, &ti)
	case dtBigVarBinary, dtBigVarChar, dtBigBinary, dtBigChar, dtNVarChar, dtNChar:
		err = readUShortLenType(r, &ti)
	case dtChar, dtVarChar, dtBinary, dtVarBinary:
		// BYTELEN maximum length, no collation (MS-TDS 2.2.5.6: COLLATION is for the BIG and
		// N types and text/ntext only).
		var n byte
		n, err = r.byte()
		ti.Size = int(n)
	case dtText, dtNText, dtImage:
		err = readLongLenType(r, &ti)
	default:
		err = fmt.Errorf("data type 0x%02X is not supported by tdstest", b)
	}
	if err != nil {
		return typeInfo{}, fmt.Errorf("TYPE_INFO %v at offset %d: %w", ti.Type, at, err)
	}
	return ti, nil
}

// readScale reads the scale of TIMEN, DATETIME2N and DATETIMEOFFSETN into ti.
func readScale(r *wireReader, ti *typeInfo) error {
	s, err := r.byte()
	if err != nil {
		return err
	}
	if s > 7 {
		return fmt.Errorf("scale %d, want 0..7", s)
	}
	ti.Scale = s
	return nil
}

// byteLenSizes are the lengths each BYTELEN type of readByteLenType accepts.
var byteLenSizes = map[dataType]func(int) bool{
	dtGUID:      func(n int) bool { return n == 16 },
	dtIntN:      func(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 },
	dtBitN:      func(n int) bool { return n == 1 },
	dtFltN:      func(n int) bool { return n == 4 || n == 8 },
	dtMoneyN:    func(n int) bool { return n == 4 || n == 8 },
	dtDateTimeN: func(n int) bool { return n == 4 || n == 8 },
	dtDecimalN:  decimalSize,
	dtNumericN:  decimalSize,
	dtDecimal:   decimalSize,
	dtNumeric:   decimalSize,
}

func decimalSize(n int) bool { return n == 5 || n == 9 || n == 13 || n == 17 }

// readByteLenType reads the length byte of a nullable fixed type, GUID or decimal into ti, and
// the precision and scale of the decimal types.
func readByteLenType(r *wireReader, ti *typeInfo) error {
	n, err := r.byte()
	if err != nil {
		return err
	}
	ti.Size = int(n)
	if !byteLenSizes[ti.Type](ti.Size) {
		return fmt.Errorf("length %d not valid for the type", ti.Size)
	}
	switch ti.Type {
	case dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
	default:
		return nil
	}
	p, err := r.byte()
	if err != nil {
		return err
	}
	sc, err := r.byte()
	if err != nil {
		return err
	}
	if p < 1 || p > 38 || sc > p {
		return fmt.Errorf("precision %d scale %d, want 1 <= precision <= 38, scale <= precision", p, sc)
	}
	if decimalBytes(p) > ti.Size {
		return fmt.Errorf("length %d too small for precision %d", ti.Size, p)
	}
	ti.Prec, ti.Scale = p, sc
	return nil
}

// readUShortLenType reads the USHORTLEN maximum length of a BIG or N type into ti, and the
// collation of the character types.
func readUShortLenType(r *wireReader, ti *typeInfo) error {
	n, err := r.uint16()
	if err != nil {
		return err
	}
	ti.Size = int(n)
	varType := ti.Type == dtBigVarBinary || ti.Type == dtBigVarChar || ti.Type == dtNVarChar
	switch {
	case ti.Size == plpMaxLen && varType:
	case ti.Size > maxVarLen:
		return fmt.Errorf("length %d, want at most %d or 0xFFFF (max) for variable types", ti.Size, maxVarLen)
	case (ti.Type == dtNVarChar || ti.Type == dtNChar) && ti.Size%2 != 0:
		return fmt.Errorf("odd length %d for a UTF-16 type", ti.Size)
	}
	if ti.Type == dtBigVarBinary || ti.Type == dtBigBinary {
		return nil
	}
	return readCollation(r, ti)
}

// readLongLenType reads the LONGLEN maximum length of text, ntext or image into ti, and the
// collation of text and ntext.
func readLongLenType(r *wireReader, ti *typeInfo) error {
	n, err := r.uint32()
	if err != nil {
		return err
	}
	if n > maxLongLen {
		return fmt.Errorf("length %d, want at most %d", n, maxLongLen)
	}
	ti.Size = int(n)
	if ti.Type == dtImage {
		return nil
	}
	return readCollation(r, ti)
}

func readCollation(r *wireReader, ti *typeInfo) error {
	c, err := r.bytes(5)
	if err != nil {
		return fmt.Errorf("collation: %w", err)
	}
	copy(ti.Collation[:], c)
	return nil
}

// appendTypeInfo appends ti as TYPE_INFO.
func appendTypeInfo(dst []byte, ti typeInfo) []byte {
	dst = append(dst, byte(ti.Type))
	switch ti.Type {
	case dtTimeN, dtDateTime2N, dtDateTimeOffset:
		return append(dst, ti.Scale)
	case dtGUID, dtIntN, dtBitN, dtFltN, dtMoneyN, dtDateTimeN:
		return append(dst, byte(ti.Size))
	case dtDecimalN, dtNumericN, dtDecimal, dtNumeric:
		return append(dst, byte(ti.Size), ti.Prec, ti.Scale)
	case dtChar, dtVarChar, dtBinary, dtVarBinary:
		return append(dst, byte(ti.Size))
	case dtImage, dtVariant:
		return binary.LittleEndian.AppendUint32(dst, uint32(ti.Size))
	case dtText, dtNText:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(ti.Size))
		return append(dst, ti.Collation[:]...)
	case dtBigVarBinary, dtBigBinary:
		return binary.LittleEndian.AppendUint16(dst, uint16(ti.Size))
	case dtBigVarChar, dtBigChar, dtNVarChar, dtNChar:
		dst = binary.LittleEndian.AppendUint16(dst, uint16(ti.Size))
		return append(dst, ti.Collation[:]...)
	}
	return dst
}
