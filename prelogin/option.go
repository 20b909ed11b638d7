package prelogin

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// option is a row of the option table.
type option struct {
	name string   // as MS-TDS spells it
	size sizeRule // the data lengths a client's PRELOGIN may give it
}

// options is the option table, indexed by token: the one place that says which tokens are
// known ([Token.Known]), their names ([Token.String]), the lengths Decode accepts for each
// (scanTable) and which options Encode writes after those of the set order (sequence). Every
// row has a token constant in token.go and a case in optionData and in setOption, and
// fullClientVector holds every row; tests check all of it. Adding an option: its token (and
// size) constants, a row here, its Message fields, and its cases in optionData and setOption.
var options = [...]option{
	TokenVersion:         {"VERSION", fixed(VersionSize)},
	TokenEncryption:      {"ENCRYPTION", fixed(EncryptionSize)},
	TokenInstOpt:         {"INSTOPT", anyLength},
	TokenThreadID:        {"THREADID", sizeRule{n: ThreadIDSize, orEmpty: true}}, // servers send it empty
	TokenMARS:            {"MARS", fixed(MARSSize)},
	TokenTraceID:         {"TRACEID", fixed(TraceIDSize)},
	TokenFedAuthRequired: {"FEDAUTHREQUIRED", fixed(FedAuthRequiredSize)},
	TokenNonceOpt:        {"NONCEOPT", fixed(NonceSize)},
}

// sizeRule is the data lengths an option may have: exactly n, n or 0 (orEmpty), or any.
type sizeRule struct {
	n       int
	orEmpty bool
	any     bool
}

// anyLength accepts every length.
var anyLength = sizeRule{any: true}

func fixed(n int) sizeRule { return sizeRule{n: n} }

// allows reports whether the rule accepts a length of n bytes.
func (r sizeRule) allows(n int) bool { return r.any || n == r.n || r.orEmpty && n == 0 }

// String describes the rule for error messages: "6", "4 or 0", "any".
func (r sizeRule) String() string {
	switch {
	case r.any:
		return "any"
	case r.orEmpty:
		return strconv.Itoa(r.n) + " or 0"
	}
	return strconv.Itoa(r.n)
}

// optionBuf has room for the data of any fixed-size option (a test checks the table against
// it): optionData encodes such an option into one.
type optionBuf [TraceIDSize]byte

// errNoCodec: a row of the option table has no case in optionData or setOption.
var errNoCodec = errors.New("prelogin: internal error: option without a codec")

// noCodec is the error of optionData and setOption for a token they do not handle.
func noCodec(t Token) error {
	return &FormatError{Err: errNoCodec, Token: t, Offset: -1, OtherAt: -1}
}

// optionData returns the data m's known option t has on the wire, encoded into b or pointing
// into m, and whether m has the option (its HasX flag). The data lies in b or in m and stays
// valid until either changes. It fails only for a token without a case here (errNoCodec).
func (m *Message) optionData(t Token, b *optionBuf) (data []byte, present bool, err error) {
	switch t {
	case TokenVersion:
		b[0], b[1] = m.Version.Major, m.Version.Minor
		binary.BigEndian.PutUint16(b[2:4], m.Version.Build)
		binary.BigEndian.PutUint16(b[4:6], m.Version.SubBuild)
		return b[:VersionSize], m.HasVersion, nil
	case TokenEncryption:
		b[0] = byte(m.Encryption)
		return b[:EncryptionSize], m.HasEncryption, nil
	case TokenInstOpt:
		return m.Instance, m.HasInstance, nil
	case TokenThreadID:
		if m.ThreadIDEmpty {
			return b[:0], m.HasThreadID, nil
		}
		binary.LittleEndian.PutUint32(b[:ThreadIDSize], m.ThreadID)
		return b[:ThreadIDSize], m.HasThreadID, nil
	case TokenMARS:
		b[0] = m.MARS
		return b[:MARSSize], m.HasMARS, nil
	case TokenTraceID:
		copy(b[0:16], m.TraceID.Connection[:])
		copy(b[16:32], m.TraceID.Activity[:])
		binary.LittleEndian.PutUint32(b[32:36], m.TraceID.Sequence)
		return b[:TraceIDSize], m.HasTraceID, nil
	case TokenFedAuthRequired:
		b[0] = m.FedAuthRequired
		return b[:FedAuthRequiredSize], m.HasFedAuthRequired, nil
	case TokenNonceOpt:
		return m.Nonce[:], m.HasNonce, nil
	default:
		return nil, false, noCodec(t)
	}
}

// setOption sets m's known option t, and its HasX flag, from data d, whose length the option
// table allows (scanTable checked it). Variable-length data is copied into m's storage (keep).
// It fails only for a token without a case here (errNoCodec).
func (m *Message) setOption(t Token, d []byte) error {
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
		if len(d) == 0 {
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
		return noCodec(t)
	}
	return nil
}
