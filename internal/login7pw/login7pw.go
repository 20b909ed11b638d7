// Package login7pw is the password obfuscation of a LOGIN7 message (MS-TDS 2.2.6.4): the
// password and the new password travel as UTF-16LE with each byte's nibbles swapped and then
// XORed with 0xA5. It is not encryption; it is written once here for the test server, which
// reads it, and the test suites, which look for it on the wire.
package login7pw

// Obfuscate returns b (UTF-16LE bytes) as LOGIN7 carries them, in a new slice.
func Obfuscate(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = (c<<4 | c>>4) ^ 0xA5
	}
	return out
}

// Deobfuscate reverses Obfuscate into a new slice.
func Deobfuscate(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		c ^= 0xA5
		out[i] = c<<4 | c>>4
	}
	return out
}
