// Package ucs2 converts between Go strings and the UTF-16LE text of TDS (MS-TDS 2.2.5.1.2:
// "UCS-2", which SQL Server reads as UTF-16): LOGIN7's strings, SQL batch text, nvarchar
// values, token strings. The functions never fail: an unpaired surrogate decodes to U+FFFD,
// and invalid UTF-8 encodes as U+FFFD.
package ucs2

import (
	"encoding/binary"
	"unicode/utf16"
)

// Decode decodes UTF-16LE bytes into a string. An odd last byte is ignored.
func Decode(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// Append appends s in UTF-16LE to dst and returns the extended slice.
func Append(dst []byte, s string) []byte {
	for _, r := range s {
		if utf16.RuneLen(r) == 2 {
			r1, r2 := utf16.EncodeRune(r)
			dst = binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(dst, uint16(r1)), uint16(r2))
			continue
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(r))
	}
	return dst
}

// Len returns the number of UTF-16 code units of s: half the length of Append's output.
func Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
