package tdstest

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// FEDAUTH in LOGIN7 and in the login response (MS-TDS 2.2.6.4 FeatureExt, 2.2.7.11
// FEATUREEXTACK).
const (
	featureFedAuth = 0x02 // FeatureId of FEDAUTH

	fedAuthLibrarySecurityToken = 0x01 // bFedAuthLibrary: the client sends the token itself
	fedAuthLibraryADAL          = 0x02 // bFedAuthLibrary: the server sends FEDAUTHINFO first

	fedAuthNonceLen = 32

	tokenFeatureExtAck = 0xAE
)

// tokenPrincipal is the user name SQL Server reports in a failed token login.
const tokenPrincipal = "<token-identified principal>"

// fedAuthLogin is the FEDAUTH feature of a LOGIN7 message. Token is a decoded copy.
type fedAuthLogin struct {
	Library  uint8 // bFedAuthLibrary
	Echo     bool  // fFedAuthEcho: the client echoes the server's FEDAUTHREQUIRED
	Token    string
	HasNonce bool
}

// parseFedAuthFeature returns the FEDAUTH feature of a LOGIN7 message b whose FeatureExt
// block checkFeatureExt has validated, or nil when there is none. Errors wrap errLogin7 and
// say what was wrong.
func parseFedAuthFeature(b []byte) (*fedAuthLogin, error) {
	le := binary.LittleEndian
	p := int(le.Uint32(b[le.Uint16(b[56:]):]))
	for b[p] != featureExtTerm {
		n := int(le.Uint32(b[p+1:]))
		if b[p] == featureFedAuth {
			return decodeFedAuth(b[p+5 : p+5+n])
		}
		p += 5 + n
	}
	return nil, nil
}

// decodeFedAuth decodes FEDAUTH FeatureData: an options byte (library in bits 1-7, echo in
// bit 0), then for the security-token library the token (u32 LE byte count, UCS-2) and an
// optional 32-byte nonce, for ADAL the workflow byte.
func decodeFedAuth(d []byte) (*fedAuthLogin, error) {
	if len(d) < 1 {
		return nil, fmt.Errorf("%w: FEDAUTH feature has no options byte", errLogin7)
	}
	f := &fedAuthLogin{Library: d[0] >> 1, Echo: d[0]&1 != 0}
	d = d[1:]
	switch f.Library {
	case fedAuthLibrarySecurityToken:
		if len(d) < 4 {
			return nil, fmt.Errorf("%w: FEDAUTH security token: %d bytes, want a 4-byte length", errLogin7, len(d))
		}
		n := uint64(binary.LittleEndian.Uint32(d))
		d = d[4:]
		if n > uint64(len(d)) || n%2 != 0 {
			return nil, fmt.Errorf("%w: FEDAUTH security token length %d (%d bytes follow; want an even count that fits)", errLogin7, n, len(d))
		}
		f.Token = decodeUCS2(d[:n])
		switch rest := len(d) - int(n); rest {
		case 0:
		case fedAuthNonceLen:
			f.HasNonce = true
		default:
			return nil, fmt.Errorf("%w: FEDAUTH security token followed by %d bytes (want none or a %d-byte nonce)", errLogin7, rest, fedAuthNonceLen)
		}
	case fedAuthLibraryADAL:
		if len(d) != 1 {
			return nil, fmt.Errorf("%w: FEDAUTH ADAL: %d bytes after the options, want the workflow byte", errLogin7, len(d))
		}
	default:
		return nil, fmt.Errorf("%w: FEDAUTH library %#02x unknown", errLogin7, f.Library)
	}
	return f, nil
}

// checkFedAuth returns why a FEDAUTH login must be refused, or "" to accept it. The
// security-token library is accepted with exactly the configured token and an echo that
// matches the FEDAUTHREQUIRED value the server sent.
func (c *conn) checkFedAuth(f *fedAuthLogin) string {
	want := c.srv.Config.FedAuthToken
	switch {
	case want == "":
		return "federated authentication is not configured (Config.FedAuthToken)"
	case f.Library != fedAuthLibrarySecurityToken:
		return fmt.Sprintf("federated authentication library %#02x is not supported (only the security token)", f.Library)
	case f.Echo != c.fedAuthRequired:
		return fmt.Sprintf("fFedAuthEcho %v does not echo the FEDAUTHREQUIRED the server sent", f.Echo)
	case subtle.ConstantTimeCompare([]byte(f.Token), []byte(want)) != 1:
		return "wrong security token"
	}
	return ""
}

// appendFeatureExtAckFedAuth appends FEATUREEXTACK acknowledging FEDAUTH with no data (the
// security-token library without a nonce), then the terminator.
func appendFeatureExtAckFedAuth(dst []byte) []byte {
	dst = append(dst, tokenFeatureExtAck, featureFedAuth, 0, 0, 0, 0)
	return append(dst, featureExtTerm)
}
