package prelogin

import "strconv"

// Encryption is the value of the PRELOGIN ENCRYPTION option (MS-TDS 2.2.6.5).
//
// The low bits carry the base value (OFF, ON, NOT_SUP, REQ, or go-mssqldb's STRICT); the 0x80 bit
// (EncryptClientCertBit) may be combined with OFF, ON and REQ by a client that authenticates
// with a certificate. Use Base and ClientCert to take a value apart.
type Encryption uint8

// ENCRYPTION values.
const (
	// EncryptOff: encryption is available but off (client: encrypt the login only, unless the
	// server requires more).
	EncryptOff Encryption = 0x00
	// EncryptOn: encryption is available and on.
	EncryptOn Encryption = 0x01
	// EncryptNotSup: encryption is not available.
	EncryptNotSup Encryption = 0x02
	// EncryptReq: encryption is required.
	EncryptReq Encryption = 0x03
	// EncryptStrict is the value go-mssqldb v1.11.2 sends with encrypt=strict (TDS 8.0). MS-TDS does
	// not define it: in TDS 8.0 the PRELOGIN travels inside TLS that is already established, and
	// the ENCRYPTION option is ignored. This package treats it as "encryption required, TLS
	// already in place": see ClientOutcome and ServerReply.
	EncryptStrict Encryption = 0x04
	// EncryptClientCertBit is ENCRYPT_CLIENT_CERT, combined with OFF, ON or REQ (0x80, 0x81,
	// 0x83) by a client that authenticates with a certificate. Servers never set it in a reply.
	EncryptClientCertBit Encryption = 0x80
)

// Base returns e without the CLIENT_CERT bit.
func (e Encryption) Base() Encryption { return e &^ EncryptClientCertBit }

// ClientCert reports whether the CLIENT_CERT bit (0x80) is set.
func (e Encryption) ClientCert() bool { return e&EncryptClientCertBit != 0 }

// Known reports whether the base value is one this package knows: OFF, ON, NOT_SUP, REQ or
// STRICT. It does not judge combinations (NOT_SUP with the CLIENT_CERT bit is Known).
func (e Encryption) Known() bool { return e.Base() <= EncryptStrict }

// String returns "OFF", "ON", "NOT_SUP", "REQ", "STRICT(0x04)", or "Encryption(0x2a)" for an
// unknown value, followed by "|CLIENT_CERT" when the 0x80 bit is set (for example "ON|CLIENT_CERT").
func (e Encryption) String() string {
	var s string
	switch e.Base() {
	case EncryptOff:
		s = "OFF"
	case EncryptOn:
		s = "ON"
	case EncryptNotSup:
		s = "NOT_SUP"
	case EncryptReq:
		s = "REQ"
	case EncryptStrict:
		s = "STRICT(0x04)"
	default:
		s = "Encryption(" + hexByte(uint8(e.Base())) + ")"
	}
	if e.ClientCert() {
		s += "|CLIENT_CERT"
	}
	return s
}

// hexByte formats b as "0x2a".
func hexByte(b uint8) string {
	s := strconv.FormatUint(uint64(b), 16)
	if len(s) == 1 {
		s = "0" + s
	}
	return "0x" + s
}
