package prelogin

import "encoding/binary"

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
		if t == TokenInstOpt || !t.Known() {
			need += ln
		}
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
		switch t {
		case TokenVersion:
			m.HasVersion = true
			m.Version = Version{
				Major:    d[0],
				Minor:    d[1],
				Build:    binary.BigEndian.Uint16(d[2:4]),
				SubBuild: binary.BigEndian.Uint16(d[4:6]),
			}
		case TokenEncryption:
			m.HasEncryption = true
			m.Encryption = Encryption(d[0])
		case TokenInstOpt:
			m.HasInstance = true
			m.Instance = m.keep(d)
		case TokenThreadID:
			m.HasThreadID = true
			if ln == 0 {
				m.ThreadIDEmpty = true
			} else {
				m.ThreadID = binary.LittleEndian.Uint32(d)
			}
		case TokenMARS:
			m.HasMARS = true
			m.MARS = d[0]
		case TokenTraceID:
			m.HasTraceID = true
			copy(m.TraceID.Connection[:], d[0:16])
			copy(m.TraceID.Activity[:], d[16:32])
			m.TraceID.Sequence = binary.LittleEndian.Uint32(d[32:36])
		case TokenFedAuthRequired:
			m.HasFedAuthRequired = true
			m.FedAuthRequired = d[0]
		case TokenNonceOpt:
			m.HasNonce = true
			copy(m.Nonce[:], d)
		default:
			m.Unknown = append(m.Unknown, Option{Token: t, Data: m.keep(d)})
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
