package tdstest

import (
	"encoding/binary"
	"io"
)

// Before TDS 7.2 there are no (max) types: SQL Server sends an nvarchar(max), varchar(max) or
// varbinary(max) column to such a login as ntext, text or image (MS-TDS 2.2.5.4.3), whose
// COLMETADATA carries a LONGLEN maximum length, the collation of the character types and a
// TableName, and whose ROW value is a TextPointer, a Timestamp and the data with a 4-byte length
// (appendColMetadataFor and appendValue write both).

// maxNTextLen is ntext's maximum length in bytes: 2^30-1 characters.
const maxNTextLen = 0x7FFFFFFE

// longForm is the long type a (max) type ti travels as before TDS 7.2; any other ti is
// returned as it is.
func (ti typeInfo) longForm() typeInfo {
	if !ti.isPLP() {
		return ti
	}
	switch ti.Type {
	case dtNVarChar:
		return typeInfo{Type: dtNText, Size: maxNTextLen, Collation: ti.Collation}
	case dtBigVarChar:
		return typeInfo{Type: dtText, Size: maxLongLen, Collation: ti.Collation}
	}
	return typeInfo{Type: dtImage, Size: maxLongLen}
}

// wireColumn is col as this login receives it: with its long form before TDS 7.2.
func (c *conn) wireColumn(col column) column {
	if !isLegacyTDS(c.tokenVersion()) || !col.TI.isPLP() {
		return col
	}
	ti := col.TI.longForm()
	col.TI = &ti
	return col
}

// writeLongRepeat writes a ROW value of a long type (text, ntext, image) holding unit repeated
// n times to w: TextPointer, Timestamp, the 4-byte length, then the data in writes of about
// plpChunkTarget bytes, one of them held in memory whatever n is. unit repeated n times must
// fit in maxLongLen bytes (plpSize checks it).
func writeLongRepeat(w io.Writer, unit []byte, n int64) error {
	hdr := make([]byte, 0, 1+len(textPointer)+8+4)
	hdr = append(hdr, byte(len(textPointer)))
	hdr = append(hdr, textPointer[:]...)
	hdr = append(hdr, make([]byte, 8)...) // Timestamp
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(int64(len(unit))*n))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	return writeRepeated(w, unit, n, false)
}
