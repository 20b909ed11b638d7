package login7

import (
	"encoding/binary"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// bFedAuthLibrary values of a FEDAUTH feature (MS-TDS 2.2.6.4).
const (
	// FedAuthLibrarySecurityToken: the client sends the token inside LOGIN7.
	FedAuthLibrarySecurityToken = 0x01
	// FedAuthLibraryADAL: the server answers LOGIN7 with FEDAUTHINFO and the client sends the
	// token afterwards, in a FEDAUTH_TOKEN message of its own (MS-TDS 2.2.7.12).
	FedAuthLibraryADAL = 0x02
	// FedAuthNonceLen is the length of the nonce that may follow a security token.
	FedAuthNonceLen = 32
)

// FedAuth is the FeatureData of a FEDAUTH feature, decoded.
type FedAuth struct {
	Library  uint8  // bFedAuthLibrary: FedAuthLibrarySecurityToken or FedAuthLibraryADAL
	Echo     bool   // fFedAuthEcho: the client echoes the server's FEDAUTHREQUIRED
	Token    string // security-token library: the token, decoded from UCS-2
	HasNonce bool   // security-token library: a FedAuthNonceLen-byte nonce follows the token
}

// FedAuthLibraryOf returns bFedAuthLibrary, the seven high bits of the first byte of a FEDAUTH
// feature's data; ok is false when data is empty.
func FedAuthLibraryOf(data []byte) (library uint8, ok bool) {
	if len(data) == 0 {
		return 0, false
	}
	return data[0] >> 1, true
}

// DecodeFedAuth decodes FEDAUTH FeatureData: an options byte (library in bits 1-7, echo in
// bit 0), then for the security-token library the token (u32 LE byte count, UCS-2) and an
// optional nonce, for ADAL the workflow byte. Errors are *FormatError wrapping ErrMalformed
// with offsets into data. It does not retain data.
func DecodeFedAuth(data []byte) (FedAuth, error) { return decodeFedAuth(data, 0) }

// decodeFedAuth is DecodeFedAuth for data at offset base of a message.
func decodeFedAuth(d []byte, base int) (FedAuth, error) {
	lib, ok := FedAuthLibraryOf(d)
	if !ok {
		return FedAuth{}, malformed("FEDAUTH", base, "feature has no options byte")
	}
	f := FedAuth{Library: lib, Echo: d[0]&1 != 0}
	d = d[1:]
	switch f.Library {
	case FedAuthLibrarySecurityToken:
		if len(d) < 4 {
			return FedAuth{}, malformed("FEDAUTH", base+1, "security token: %d bytes, want a 4-byte length", len(d))
		}
		n := uint64(binary.LittleEndian.Uint32(d))
		d = d[4:]
		if n > uint64(len(d)) || n%2 != 0 {
			return FedAuth{}, malformed("FEDAUTH", base+1, "security token length %d (%d bytes follow; want an even count that fits)", n, len(d))
		}
		f.Token = ucs2.Decode(d[:n])
		switch rest := len(d) - int(n); rest {
		case 0:
		case FedAuthNonceLen:
			f.HasNonce = true
		default:
			return FedAuth{}, malformed("FEDAUTH", base+5+int(n), "security token followed by %d bytes (want none or a %d-byte nonce)", rest, FedAuthNonceLen)
		}
	case FedAuthLibraryADAL:
		if len(d) != 1 {
			return FedAuth{}, malformed("FEDAUTH", base+1, "ADAL: %d bytes after the options, want the workflow byte", len(d))
		}
	default:
		return FedAuth{}, malformed("FEDAUTH", base, "library %#02x unknown", f.Library)
	}
	return f, nil
}
