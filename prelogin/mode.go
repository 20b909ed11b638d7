package prelogin

import "strconv"

// Mode is how much of a connection runs over TLS: what the ENCRYPTION negotiation decides
// ([ClientOutcome], [ServerReply]), or, for TDS 8.0, what the client decided before its first
// byte. The zero Mode is ModeNone; [Mode.Valid] reports whether a value is one of the constants.
type Mode uint8

const (
	// ModeNone: no TLS; the connection stays in plaintext.
	ModeNone Mode = iota
	// ModeLoginOnly: TLS handshake inside PRELOGIN packets, then only the first packet of
	// LOGIN7 is encrypted; everything after it is plaintext.
	ModeLoginOnly
	// ModeFull: TLS handshake inside PRELOGIN packets, then every packet is encrypted.
	ModeFull
	// ModeStrict: TDS 8.0: TLS directly on TCP before any TDS byte, then every packet inside
	// it; the PRELOGIN exchange travels inside TLS and its ENCRYPTION value is ignored.
	ModeStrict
)

// modeNames holds the name of every Mode; its length bounds the valid values.
var modeNames = [...]string{
	ModeNone:      "none",
	ModeLoginOnly: "login-only",
	ModeFull:      "full",
	ModeStrict:    "strict",
}

// Valid reports whether m is one of the Mode constants.
func (m Mode) Valid() bool { return int(m) < len(modeNames) }

// String returns "none", "login-only", "full", "strict", or "Mode(7)" for a value that is not
// valid.
func (m Mode) String() string {
	if m.Valid() {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}
