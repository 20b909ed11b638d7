package tdstest

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// Encryption is the server's encryption setting (Config.Encryption), SQL Server's "force
// encryption" and "force strict encryption" options in one value. The zero value is EncryptOn,
// what a test server most often needs: every connection encrypted.
type Encryption uint8

const (
	// EncryptOn replies ON in PRELOGIN (REQ to a client that sent OFF): the whole connection is
	// encrypted, and a client that cannot encrypt is refused. A connection that starts with a
	// TLS ClientHello is served as TDS 8.0 (strict).
	EncryptOn Encryption = iota
	// EncryptOff replies OFF: encryption is available, for the login only unless the client
	// asks for more. A TDS 8.0 connection is served as with EncryptOn.
	EncryptOff
	// EncryptNotSup replies NOT_SUP: no encryption; a client that requires it is refused, and
	// so is a connection that starts with a TLS ClientHello.
	EncryptNotSup
	// EncryptStrict requires TDS 8.0: TLS directly on TCP before any TDS byte, ALPN "tds/8.0",
	// TLS 1.3 allowed. A client that starts with PRELOGIN is refused.
	EncryptStrict
)

var encryptionNames = [...]string{EncryptOn: "ON", EncryptOff: "OFF", EncryptNotSup: "NOT_SUP", EncryptStrict: "STRICT"}

// String returns "ON", "OFF", "NOT_SUP" or "STRICT".
func (e Encryption) String() string {
	if int(e) < len(encryptionNames) {
		return encryptionNames[e]
	}
	return fmt.Sprintf("Encryption(%d)", uint8(e))
}

// notASetting is an ENCRYPTION value that is no server setting: [prelogin.ServerReply] refuses
// every client with it.
const notASetting prelogin.Encryption = 0x7F

// preloginSetting is the ENCRYPTION setting the PRELOGIN negotiation uses (prelogin.ServerReply):
// ON for EncryptOn and EncryptStrict (whose clients never send PRELOGIN before TLS). An unknown
// e (which Config's check refuses) gets notASetting: every client is refused.
func (e Encryption) preloginSetting() prelogin.Encryption {
	switch e {
	case EncryptOn, EncryptStrict:
		return prelogin.EncryptOn
	case EncryptOff:
		return prelogin.EncryptOff
	case EncryptNotSup:
		return prelogin.EncryptNotSup
	default:
		return notASetting
	}
}
