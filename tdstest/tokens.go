package tdstest

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// Token types of a tabular result (MS-TDS 2.2.7).
const (
	tokenColMetadata  = 0x81
	tokenError        = 0xAA
	tokenInfo         = 0xAB
	tokenLoginAck     = 0xAD
	tokenRow          = 0xD1
	tokenEnvChange    = 0xE3
	tokenDone         = 0xFD
	tokenDoneProc     = 0xFE
	tokenDoneInProc   = 0xFF
	tokenReturnStatus = 0x79
	tokenReturnValue  = 0xAC
)

// DONE status bits.
const (
	doneFinal = 0x00
	doneMore  = 0x01
	doneError = 0x02
	doneCount = 0x10
	doneAttn  = 0x20
)

// ENVCHANGE types.
const (
	envDatabase   = 1
	envLanguage   = 2
	envPacketSize = 4
	envCollation  = 7
)

const (
	colFlagNullable = 0x0001
	plpMaxLen       = 0xFFFF
	// plpChunkTarget is the size of the PLP chunks the server writes (whole units of the
	// repeated value, so slightly less when the unit does not divide it).
	plpChunkTarget = 8000
)

// serverCollation is SQL_Latin1_General_CP1_CI_AS (LCID 0x0409, CI, AS, sort id 52).
var serverCollation = [5]byte{0x09, 0x04, 0xD0, 0x00, 0x34}

const (
	serverProgName   = "tdstest"
	serverInstance   = "TDSTEST"
	serverVersionStr = "Microsoft SQL Server 2022 (RTM) - 16.0.1000.6 (X64) (tdstest: embedded test server)"
)

// serverProgVersion is LOGINACK's ProgVersion: 16.0.1000 (major, minor, build high, build low).
var serverProgVersion = [4]byte{16, 0, 0x03, 0xE8}

func appendBVarChar(dst []byte, s string) []byte {
	dst = append(dst, byte(ucs2.Len(s)))
	return ucs2.Append(dst, s)
}

func appendUSVarChar(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(ucs2.Len(s)))
	return ucs2.Append(dst, s)
}

// beginLenToken appends a token type and a placeholder u16 length; finishLenToken fills it in.
func beginLenToken(dst []byte, typ byte) ([]byte, int) {
	dst = append(dst, typ, 0, 0)
	return dst, len(dst)
}

func finishLenToken(dst []byte, start int) []byte {
	binary.LittleEndian.PutUint16(dst[start-2:], uint16(len(dst)-start))
	return dst
}

// appendEnvChangeString appends an ENVCHANGE token whose values are B_VARCHAR strings
// (database, language, packet size).
func appendEnvChangeString(dst []byte, typ byte, newValue, oldValue string) []byte {
	dst, start := beginLenToken(dst, tokenEnvChange)
	dst = append(dst, typ)
	dst = appendBVarChar(dst, newValue)
	dst = appendBVarChar(dst, oldValue)
	return finishLenToken(dst, start)
}

// appendEnvChangePacketSize appends ENVCHANGE type 4 with the new and old sizes as decimal strings.
func appendEnvChangePacketSize(dst []byte, newSize, oldSize int) []byte {
	return appendEnvChangeString(dst, envPacketSize, strconv.Itoa(newSize), strconv.Itoa(oldSize))
}

// appendEnvChangeCollation appends ENVCHANGE type 7 (SQL collation, B_VARBYTE values).
func appendEnvChangeCollation(dst []byte) []byte {
	dst, start := beginLenToken(dst, tokenEnvChange)
	dst = append(dst, envCollation, byte(len(serverCollation)))
	dst = append(dst, serverCollation[:]...)
	dst = append(dst, 0) // old value: empty
	return finishLenToken(dst, start)
}

// appendLoginAck appends LOGINACK: interface 1 (T-SQL), the TDS version big-endian, the program
// name and version.
func appendLoginAck(dst []byte, tdsVersion uint32) []byte {
	dst, start := beginLenToken(dst, tokenLoginAck)
	dst = append(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, tdsVersion)
	dst = appendBVarChar(dst, serverProgName)
	dst = append(dst, serverProgVersion[:]...)
	return finishLenToken(dst, start)
}

// appendDone appends a DONE token (TDS 7.2+: 64-bit row count).
func appendDone(dst []byte, status, curCmd uint16, rowCount uint64) []byte {
	return appendDoneToken(dst, tokenDone, status, curCmd, rowCount)
}

// appendDoneToken appends a DONE, DONEPROC or DONEINPROC token (typ) for TDS 7.2+.
func appendDoneToken(dst []byte, typ byte, status, curCmd uint16, rowCount uint64) []byte {
	return appendDoneTokenFor(dst, verTDS74, typ, status, curCmd, rowCount)
}

// appendDoneTokenFor appends a DONE, DONEPROC or DONEINPROC token for TDS version ver: the row
// count is 32 bits before TDS 7.2 (MS-TDS 2.2.7.6), 64 bits since.
func appendDoneTokenFor(dst []byte, ver uint32, typ byte, status, curCmd uint16, rowCount uint64) []byte {
	dst = append(dst, typ)
	dst = binary.LittleEndian.AppendUint16(dst, status)
	dst = binary.LittleEndian.AppendUint16(dst, curCmd)
	if isLegacyTDS(ver) {
		return binary.LittleEndian.AppendUint32(dst, uint32(min(rowCount, 0xFFFFFFFF)))
	}
	return binary.LittleEndian.AppendUint64(dst, rowCount)
}

// serverMessage is the content of an ERROR or INFO token.
type serverMessage struct {
	Number int32
	State  uint8
	Class  uint8
	Text   string
	Proc   string
	Line   int32
}

// appendMessage appends an ERROR (tokenError) or INFO (tokenInfo) token for TDS 7.2+. Text
// longer than the protocol's 65535 UTF-16 units is cut.
func appendMessage(dst []byte, typ byte, m serverMessage) []byte {
	return appendMessageFor(dst, verTDS74, typ, m)
}

// appendMessageFor is appendMessage for TDS version ver: LineNumber is 16 bits before TDS 7.2.
func appendMessageFor(dst []byte, ver uint32, typ byte, m serverMessage) []byte {
	text := m.Text
	if ucs2.Len(text) > 0xFFFF {
		text = truncateUCS2(text, 0xFFFF)
	}
	dst, start := beginLenToken(dst, typ)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(m.Number))
	dst = append(dst, m.State, m.Class)
	dst = appendUSVarChar(dst, text)
	dst = appendBVarChar(dst, serverInstance)
	dst = appendBVarChar(dst, m.Proc)
	if isLegacyTDS(ver) {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(m.Line))
		return finishLenToken(dst, start)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(m.Line))
	return finishLenToken(dst, start)
}

func truncateUCS2(s string, units int) string {
	n := 0
	for i, r := range s {
		if n+runeUnits(r) > units {
			return s[:i]
		}
		n += runeUnits(r)
	}
	return s
}

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// column describes one result column.
type column struct {
	Name    string
	TI      *typeInfo // the column's TYPE_INFO
	NotNull bool      // the column is NOT NULL (Flags without the nullable bit)
}

// appendColMetadata appends COLMETADATA for cols (TDS 7.2+: 32-bit UserType).
func appendColMetadata(dst []byte, cols []column) []byte {
	return appendColMetadataFor(dst, verTDS74, cols)
}

// appendColMetadataFor is appendColMetadata for TDS version ver: UserType is 16 bits before TDS
// 7.2 (MS-TDS 2.2.7.4); character types carry no collation before TDS 7.1.
func appendColMetadataFor(dst []byte, ver uint32, cols []column) []byte {
	dst = append(dst, tokenColMetadata)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(cols)))
	for _, c := range cols {
		if isLegacyTDS(ver) {
			dst = binary.LittleEndian.AppendUint16(dst, 0) // UserType
		} else {
			dst = binary.LittleEndian.AppendUint32(dst, 0) // UserType
		}
		flags := uint16(colFlagNullable)
		if c.NotNull {
			flags = 0
		}
		dst = binary.LittleEndian.AppendUint16(dst, flags)
		dst = appendTypeInfo(dst, *c.TI)
		switch c.TI.Type {
		case dtBigVarChar, dtBigChar, dtNVarChar, dtNChar, dtText, dtNText:
			if ver>>24 == 0x70 {
				dst = dst[:len(dst)-len(serverCollation)] // no collation at TDS 7.0
			}
		}
		if c.TI.Type == dtText || c.TI.Type == dtNText || c.TI.Type == dtImage {
			// TableName (MS-TDS 2.2.7.4): NumParts 0 since TDS 7.2, an empty US_VARCHAR before.
			if isLegacyTDS(ver) {
				dst = append(dst, 0, 0)
			} else {
				dst = append(dst, 0)
			}
		}
		dst = appendBVarChar(dst, c.Name)
	}
	return dst
}

// writePLPRepeat writes a PLP value of unit repeated n times to w: the total length (u64 LE), then
// chunks (u32 LE length + data) of whole units, then the terminator (u32 0). It holds one chunk of
// about plpChunkTarget bytes in memory whatever n is.
func writePLPRepeat(w io.Writer, unit []byte, n int64) error {
	var hdr [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(len(unit))*uint64(n))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if err := writeRepeated(w, unit, n, true); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(hdr[:4], 0)
	_, err := w.Write(hdr[:4])
	return err
}

// writeRepeated writes unit repeated n times to w in chunks of whole units of about
// plpChunkTarget bytes (one unit when it is larger), each preceded by its length (u32 LE) when
// framed, as PLP chunks are. It holds one chunk in memory whatever n is.
func writeRepeated(w io.Writer, unit []byte, n int64, framed bool) error {
	if len(unit) == 0 || n <= 0 {
		return nil
	}
	per := min(max(int64(plpChunkTarget/len(unit)), 1), n)
	chunk := make([]byte, 4, 4+int(per)*len(unit))
	for range per {
		chunk = append(chunk, unit...)
	}
	for left := n; left > 0; {
		k := min(per, left)
		c := chunk[:4+int(k)*len(unit)]
		binary.LittleEndian.PutUint32(c, uint32(len(c)-4))
		if !framed {
			c = c[4:]
		}
		if _, err := w.Write(c); err != nil {
			return err
		}
		left -= k
	}
	return nil
}

// maxPLPValue bounds a value the server agrees to produce (nvarchar(max)/varbinary(max) hold at
// most 2^31-1 bytes).
const maxPLPValue = 1<<31 - 1

// plpSize checks that unit repeated n times fits a (max) value.
func plpSize(unit []byte, n int64) (int64, error) {
	if n < 0 {
		return 0, fmt.Errorf("negative repeat count %d", n)
	}
	if len(unit) > 0 && n > maxPLPValue/int64(len(unit)) {
		return 0, fmt.Errorf("value of %d x %d bytes exceeds the 2 GiB limit of (max) types", n, len(unit))
	}
	return n * int64(len(unit)), nil
}
