package prelogin

// Token identifies a PRELOGIN option (MS-TDS 2.2.6.5).
type Token uint8

// PRELOGIN option tokens, with the data length each has on the wire.
const (
	TokenVersion         Token = 0x00 // VERSION: 6 bytes; must be the first option
	TokenEncryption      Token = 0x01 // ENCRYPTION: 1 byte
	TokenInstOpt         Token = 0x02 // INSTOPT: client instance name + NUL; server 1 byte
	TokenThreadID        Token = 0x03 // THREADID: client 4 bytes; server 0 bytes
	TokenMARS            Token = 0x04 // MARS: 1 byte
	TokenTraceID         Token = 0x05 // TRACEID: 36 bytes
	TokenFedAuthRequired Token = 0x06 // FEDAUTHREQUIRED: 1 byte
	TokenNonceOpt        Token = 0x07 // NONCEOPT: 32 bytes
	TokenTerminator      Token = 0xFF // TERMINATOR: ends the option table
)

// Sizes of the fixed-size options.
const (
	VersionSize         = 6
	EncryptionSize      = 1
	ThreadIDSize        = 4
	MARSSize            = 1
	TraceIDSize         = 36
	FedAuthRequiredSize = 1
	NonceSize           = 32

	// EntrySize is the size of one option table entry (token, offset, length).
	EntrySize = 5
)

// Known reports whether t is one of the option tokens 0x00..0x07 (not the terminator).
func (t Token) Known() bool { return t <= TokenNonceOpt }

// String returns the option's name as MS-TDS spells it ("VERSION", "FEDAUTHREQUIRED",
// "TERMINATOR", ...) or "Token(0x2a)" for an unknown token.
func (t Token) String() string {
	switch t {
	case TokenVersion:
		return "VERSION"
	case TokenEncryption:
		return "ENCRYPTION"
	case TokenInstOpt:
		return "INSTOPT"
	case TokenThreadID:
		return "THREADID"
	case TokenMARS:
		return "MARS"
	case TokenTraceID:
		return "TRACEID"
	case TokenFedAuthRequired:
		return "FEDAUTHREQUIRED"
	case TokenNonceOpt:
		return "NONCEOPT"
	case TokenTerminator:
		return "TERMINATOR"
	}
	return "Token(" + hexByte(uint8(t)) + ")"
}

// lengthOK reports whether n is an acceptable data length for token t. Unknown tokens and
// INSTOPT take any length; THREADID takes 4 (client) or 0 (server).
func lengthOK(t Token, n int) bool {
	switch t {
	case TokenVersion:
		return n == VersionSize
	case TokenEncryption:
		return n == EncryptionSize
	case TokenThreadID:
		return n == ThreadIDSize || n == 0
	case TokenMARS:
		return n == MARSSize
	case TokenTraceID:
		return n == TraceIDSize
	case TokenFedAuthRequired:
		return n == FedAuthRequiredSize
	case TokenNonceOpt:
		return n == NonceSize
	}
	return true
}

// wantLength describes the acceptable lengths of t for error messages.
func wantLength(t Token) string {
	switch t {
	case TokenVersion:
		return "6"
	case TokenEncryption, TokenMARS, TokenFedAuthRequired:
		return "1"
	case TokenThreadID:
		return "4 or 0"
	case TokenTraceID:
		return "36"
	case TokenNonceOpt:
		return "32"
	}
	return "any"
}

// tokenSet is a set of tokens 0x00..0xFF.
type tokenSet [4]uint64

func (s *tokenSet) has(t Token) bool { return s[t>>6]&(1<<(t&63)) != 0 }
func (s *tokenSet) add(t Token)      { s[t>>6] |= 1 << (t & 63) }
