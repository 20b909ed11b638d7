package prelogin

import "slices"

// maxPayload is the largest payload whose offsets fit in 16 bits.
const maxPayload = 0xFFFF

// sequence lists the options Encode writes, in order: a known token t as uint16(t), Unknown[i]
// as unknownBase+i. Options have distinct tokens other than the terminator: 255 at most.
type sequence [256]uint16

const unknownBase = 0x100

// seqToken returns the token of sequence element s.
func (m *Message) seqToken(s uint16) Token {
	if s >= unknownBase {
		return m.Unknown[s-unknownBase].Token
	}
	return Token(s)
}

// seqData returns the data of sequence element s, encoded into b for a fixed-size option (see
// optionData). sequence has checked that every known option has a codec.
func (m *Message) seqData(s uint16, b *optionBuf) []byte {
	if s >= unknownBase {
		return m.Unknown[s-unknownBase].Data
	}
	d, _, _ := m.optionData(Token(s), b)
	return d
}

// sequence fills seq with the options to encode, in order, and returns their number. It fails
// if Unknown holds a known, repeated or terminator token, or if a row of the option table has
// no codec (errNoCodec).
func (m *Message) sequence(seq *sequence) (int, error) {
	var unknown tokenSet
	for _, o := range m.Unknown {
		if o.Token.Known() || o.Token == TokenTerminator {
			return 0, &FormatError{Err: ErrInvalidOption, Token: o.Token, Offset: -1, OtherAt: -1}
		}
		if unknown.has(o.Token) {
			return 0, &FormatError{Err: ErrDuplicateOption, Token: o.Token, Offset: -1, Other: o.Token, OtherAt: -1}
		}
		unknown.add(o.Token)
	}
	var present, done tokenSet
	var b optionBuf
	for t := range Token(len(options)) {
		_, ok, err := m.optionData(t, &b)
		if err != nil {
			return 0, err
		}
		if ok {
			present.add(t)
		}
	}
	k := 0
	emit := func(s uint16, t Token) {
		seq[k] = s
		k++
		done.add(t)
	}
	if present.has(TokenVersion) {
		emit(uint16(TokenVersion), TokenVersion)
	}
	for _, t := range m.order {
		switch {
		case done.has(t):
		case present.has(t):
			emit(uint16(t), t)
		case unknown.has(t):
			emit(unknownBase+uint16(m.unknownIndex(t)), t)
		}
	}
	for t := range Token(len(options)) {
		if !done.has(t) && present.has(t) {
			emit(uint16(t), t)
		}
	}
	for i, o := range m.Unknown {
		if !done.has(o.Token) {
			emit(unknownBase+uint16(i), o.Token)
		}
	}
	return k, nil
}

// Size returns the length of the payload Encode would write, or an error if it would fail.
func (m *Message) Size() (int, error) {
	var seq sequence
	k, err := m.sequence(&seq)
	if err != nil {
		return 0, err
	}
	return m.size(&seq, k)
}

func (m *Message) size(seq *sequence, k int) (int, error) {
	total := k*EntrySize + 1
	var b optionBuf
	for _, s := range seq[:k] {
		total += len(m.seqData(s, &b))
	}
	if total > maxPayload {
		return 0, &FormatError{Err: ErrTooLarge, Offset: -1, OtherAt: -1, PayloadLen: total}
	}
	return total, nil
}

// Encode appends the canonical encoding of m to dst and returns the extended slice: the option
// table in m's order (see Message), the terminator, then each option's data in table order. It
// fails, returning dst unchanged, if Unknown holds a known or repeated token (ErrInvalidOption,
// ErrDuplicateOption) or the payload would exceed 65535 bytes (ErrTooLarge). Encode does not
// modify m and does not allocate when dst has room for the payload.
func (m *Message) Encode(dst []byte) ([]byte, error) {
	var seq sequence
	k, err := m.sequence(&seq)
	if err != nil {
		return dst, err
	}
	total, err := m.size(&seq, k)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = slices.Grow(dst, total)[:start+total]
	p := dst[start:]
	off := k*EntrySize + 1
	var b optionBuf
	for i, s := range seq[:k] {
		e := p[i*EntrySize:]
		d := m.seqData(s, &b)
		e[0] = byte(m.seqToken(s))
		put16(e[1:3], off)
		put16(e[3:5], len(d))
		off += copy(p[off:], d)
	}
	p[k*EntrySize] = byte(TokenTerminator)
	return dst, nil
}
