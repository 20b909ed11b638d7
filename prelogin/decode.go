package prelogin

// Decode parses the PRELOGIN payload src into m, replacing its contents. It checks the whole
// option table first (see the package documentation for what is rejected and what tolerated)
// and returns a *FormatError wrapping one of the sentinels ErrNoTerminator, ErrTruncatedTable,
// ErrOptionBounds, ErrOptionOverlap, ErrOptionLength, ErrDuplicateOption or ErrVersionNotFirst;
// on error m is left empty (as after Reset). These are the checks for a client's PRELOGIN as a
// server reads it; a client reading a server's reply needs fewer (see [ReplyEncryptionOf]).
//
// Decode does not keep a reference to src: INSTOPT and unknown option data are copied into
// storage owned by m, valid until the next Decode or Reset on m. With a reused m it does not
// allocate in the steady state.
func (m *Message) Decode(src []byte) error {
	n, err := scanTable(src)
	m.Reset()
	if err != nil {
		return err
	}
	need, unknown := 0, 0
	for i := range n {
		t, _, ln := entry(src, i)
		need += ln // at least what keep copies: variable-length and unknown options
		if !t.Known() {
			unknown++
		}
	}
	if cap(m.buf) < need {
		m.buf = make([]byte, 0, need) // sized once: slices into it stay valid while it fills
	}
	if cap(m.Unknown) < unknown {
		m.Unknown = make([]Option, 0, unknown)
	}
	if cap(m.order) < n {
		m.order = make([]Token, 0, n)
	}
	for i := range n {
		t, off, ln := entry(src, i)
		d := src[off : off+ln]
		m.order = append(m.order, t)
		if !t.Known() {
			m.Unknown = append(m.Unknown, Option{Token: t, Data: m.keep(d)})
		} else if err := m.setOption(t, d); err != nil {
			m.Reset()
			return err
		}
	}
	return nil
}

// keep copies d into m.buf, which Decode has sized for all of it, and returns the copy.
func (m *Message) keep(d []byte) []byte {
	start := len(m.buf)
	m.buf = append(m.buf, d...)
	return m.buf[start:len(m.buf):len(m.buf)]
}
