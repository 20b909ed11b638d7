package prelogin

// Token identifies a PRELOGIN option (MS-TDS 2.2.6.5). The options this package knows are the
// rows of the option table (option.go); every other token but the terminator is kept as an
// [Option].
type Token uint8

// PRELOGIN option tokens, with the data length each has on the wire. Each option token has a
// row in the option table; a test checks that the two agree.
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

// Known reports whether t is an option this package knows (a row of the option table); the
// terminator is not one.
func (t Token) Known() bool { return int(t) < len(options) }

// String returns the option's name as MS-TDS spells it ("VERSION", "FEDAUTHREQUIRED",
// "TERMINATOR", ...) or "Token(0x2a)" for an unknown token.
func (t Token) String() string {
	switch {
	case t.Known():
		return options[t].name
	case t == TokenTerminator:
		return "TERMINATOR"
	}
	return "Token(" + hexByte(uint8(t)) + ")"
}

// lengthOK reports whether n is an acceptable data length for token t in a client's PRELOGIN:
// the option table's size rule for a known token, any length for an unknown one.
func lengthOK(t Token, n int) bool { return !t.Known() || options[t].size.allows(n) }

// wantLength describes the acceptable lengths of t for error messages.
func wantLength(t Token) string {
	if !t.Known() {
		return anyLength.String()
	}
	return options[t].size.String()
}

// tokenSet is a set of tokens 0x00..0xFF.
type tokenSet [4]uint64

func (s *tokenSet) has(t Token) bool { return s[t>>6]&(1<<(t&63)) != 0 }
func (s *tokenSet) add(t Token)      { s[t>>6] |= 1 << (t & 63) }
