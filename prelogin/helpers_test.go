package prelogin

// ent returns the 5-byte table entry (token, offset, length) for hand-made payloads.
func ent(t Token, off, n int) []byte {
	return []byte{byte(t), byte(off >> 8), byte(off), byte(n >> 8), byte(n)}
}

// cat concatenates byte slices into a new slice.
func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// term is the table terminator.
var term = []byte{0xFF}

// clone returns a copy of b.
func clone(b []byte) []byte { return append([]byte(nil), b...) }
