package prelogin

import (
	"encoding/binary"
	"slices"
)

// maxPayload is the largest payload whose offsets fit in 16 bits.
const maxPayload = 0xFFFF

// sequence lists the options Encode writes, in order: a known token t as uint16(t), Unknown[i]
// as unknownBase+i. At most 8 known tokens and 247 distinct unknown ones (0x08..0xFE) exist.
type sequence [256]uint16

const unknownBase = 0x100

// seqToken returns the token of sequence element s.
func (m *Message) seqToken(s uint16) Token {
	if s >= unknownBase {
		return m.Unknown[s-unknownBase].Token
	}
	return Token(s)
}

// unknownData returns the data of sequence element s if it is an Unknown option, else nil.
func (m *Message) unknownData(s uint16) []byte {
	if s >= unknownBase {
		return m.Unknown[s-unknownBase].Data
	}
	return nil
}

// sequence fills seq with the options to encode, in order, and returns their number.
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
	var done tokenSet
	k := 0
	emit := func(s uint16, t Token) {
		seq[k] = s
		k++
		done.add(t)
	}
	if m.HasVersion {
		emit(uint16(TokenVersion), TokenVersion)
	}
	for _, t := range m.order {
		switch {
		case done.has(t):
		case t.Known():
			if m.Has(t) {
				emit(uint16(t), t)
			}
		case unknown.has(t):
			emit(unknownBase+uint16(m.unknownIndex(t)), t)
		}
	}
	for t := TokenEncryption; t <= TokenNonceOpt; t++ {
		if !done.has(t) && m.Has(t) {
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

// dataLen returns the encoded data length of sequence element s.
func (m *Message) dataLen(s uint16) int {
	switch s {
	case uint16(TokenVersion):
		return VersionSize
	case uint16(TokenEncryption):
		return EncryptionSize
	case uint16(TokenInstOpt):
		return len(m.Instance)
	case uint16(TokenThreadID):
		if m.ThreadIDEmpty {
			return 0
		}
		return ThreadIDSize
	case uint16(TokenMARS):
		return MARSSize
	case uint16(TokenTraceID):
		return TraceIDSize
	case uint16(TokenFedAuthRequired):
		return FedAuthRequiredSize
	case uint16(TokenNonceOpt):
		return NonceSize
	}
	return len(m.Unknown[s-unknownBase].Data)
}

// putData writes the data of sequence element s into b, which has exactly dataLen(s) bytes.
func (m *Message) putData(b []byte, s uint16) {
	switch s {
	case uint16(TokenVersion):
		b[0], b[1] = m.Version.Major, m.Version.Minor
		binary.BigEndian.PutUint16(b[2:4], m.Version.Build)
		binary.BigEndian.PutUint16(b[4:6], m.Version.SubBuild)
	case uint16(TokenEncryption):
		b[0] = byte(m.Encryption)
	case uint16(TokenInstOpt):
		copy(b, m.Instance)
	case uint16(TokenThreadID):
		if !m.ThreadIDEmpty {
			binary.LittleEndian.PutUint32(b, m.ThreadID)
		}
	case uint16(TokenMARS):
		b[0] = m.MARS
	case uint16(TokenTraceID):
		copy(b[0:16], m.TraceID.Connection[:])
		copy(b[16:32], m.TraceID.Activity[:])
		binary.LittleEndian.PutUint32(b[32:36], m.TraceID.Sequence)
	case uint16(TokenFedAuthRequired):
		b[0] = m.FedAuthRequired
	case uint16(TokenNonceOpt):
		copy(b, m.Nonce[:])
	default:
		copy(b, m.Unknown[s-unknownBase].Data)
	}
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
	for _, s := range seq[:k] {
		total += m.dataLen(s)
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
	for i, s := range seq[:k] {
		e := p[i*EntrySize:]
		n := m.dataLen(s)
		e[0] = byte(m.seqToken(s))
		put16(e[1:3], off)
		put16(e[3:5], n)
		m.putData(p[off:off+n], s)
		off += n
	}
	p[k*EntrySize] = byte(TokenTerminator)
	return dst, nil
}
