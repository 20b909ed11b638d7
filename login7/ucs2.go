package login7

import "unicode/utf16"

// decodeUCS2 decodes UTF-16LE bytes (an even number) into a string; unpaired surrogates
// become U+FFFD.
func decodeUCS2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// appendUCS2 appends s in UTF-16LE (invalid UTF-8 as U+FFFD).
func appendUCS2(dst []byte, s string) []byte {
	for _, r := range s {
		if utf16.RuneLen(r) == 2 {
			r1, r2 := utf16.EncodeRune(r)
			dst = le.AppendUint16(le.AppendUint16(dst, uint16(r1)), uint16(r2))
			continue
		}
		dst = le.AppendUint16(dst, uint16(r))
	}
	return dst
}

// ucs2Len is the number of UTF-16 code units of s.
func ucs2Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
