package prelogin

// be16 reads a big-endian uint16 from b[0:2] as an int.
func be16(b []byte) int { return int(b[0])<<8 | int(b[1]) }

// put16 writes v big-endian into b[0:2].
func put16(b []byte, v int) { b[0], b[1] = byte(v>>8), byte(v) }

// entry returns the token, data offset and data length of table entry i of p. The caller has
// checked (with scanTable) that the entry exists.
func entry(p []byte, i int) (t Token, off, n int) {
	e := p[i*EntrySize : i*EntrySize+EntrySize]
	return Token(e[0]), be16(e[1:3]), be16(e[3:5])
}

// tableLen walks the option table of payload p to its terminator and returns the number of
// entries before it, or the error of a table without a terminator or with an entry cut short.
// It does not allocate unless it returns an error.
func tableLen(p []byte) (int, error) {
	pos := 0
	for {
		if pos >= len(p) {
			return 0, &FormatError{Err: ErrNoTerminator, Token: TokenTerminator, Offset: pos, PayloadLen: len(p)}
		}
		t := Token(p[pos])
		if t == TokenTerminator {
			return pos / EntrySize, nil
		}
		if len(p)-pos < EntrySize {
			return 0, &FormatError{Err: ErrTruncatedTable, Token: t, Offset: pos, PayloadLen: len(p)}
		}
		pos += EntrySize
	}
}

// scanTable checks the option table of payload p and returns the number of entries before the
// terminator. After a nil error, every entry i < n with a non-empty p[off:off+len] has it inside
// the data area (from the byte after the terminator to the end of p), every empty one has
// off <= len(p), no two non-empty data ranges overlap, no
// token repeats, VERSION (if present) is entry 0 and every known fixed-size option has its size.
// It does not allocate unless it returns an error.
func scanTable(p []byte) (n int, err error) {
	if n, err = tableLen(p); err != nil {
		return 0, err
	}
	var seen tokenSet
	for i := range n {
		pos := i * EntrySize
		t, off, ln := entry(p, i)
		if seen.has(t) {
			first := 0
			for ; Token(p[first]) != t; first += EntrySize {
			}
			return 0, &FormatError{Err: ErrDuplicateOption, Token: t, Offset: pos, Other: t, OtherAt: first, PayloadLen: len(p)}
		}
		seen.add(t)
		if t == TokenVersion && pos != 0 {
			return 0, &FormatError{Err: ErrVersionNotFirst, Token: t, Offset: pos, PayloadLen: len(p)}
		}
		if !lengthOK(t, ln) {
			return 0, &FormatError{Err: ErrOptionLength, Token: t, Offset: pos,
				DataOffset: off, DataLength: ln, PayloadLen: len(p)}
		}
	}
	dataStart := n*EntrySize + 1
	for i := 0; i < n; i++ {
		t, off, ln := entry(p, i)
		// An empty option reads no byte: its offset only has to be within the payload (some
		// peers point empty options at 0). Data must lie after the terminator.
		if off+ln > len(p) || ln > 0 && off < dataStart {
			return 0, &FormatError{Err: ErrOptionBounds, Token: t, Offset: i * EntrySize,
				DataOffset: off, DataLength: ln, PayloadLen: len(p)}
		}
		if ln == 0 {
			continue
		}
		for j := 0; j < i; j++ {
			u, off2, ln2 := entry(p, j)
			if ln2 != 0 && off < off2+ln2 && off2 < off+ln {
				return 0, &FormatError{Err: ErrOptionOverlap, Token: t, Offset: i * EntrySize,
					DataOffset: off, DataLength: ln, PayloadLen: len(p), Other: u, OtherAt: j * EntrySize}
			}
		}
	}
	return n, nil
}
