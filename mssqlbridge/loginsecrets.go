package mssqlbridge

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// login7Field names a secret field of a LOGIN7 message (MS-TDS 2.2.6.4).
type login7Field uint8

const (
	fieldPassword       login7Field = iota // ibPassword/cchPassword
	fieldChangePassword                    // ibChangePassword/cchChangePassword (TDS 7.2+)
	fieldFedAuth                           // FEDAUTH (0x02) feature data in FeatureExt (TDS 7.4+)
)

var login7FieldNames = [...]string{"password", "new password", "FEDAUTH token"}

func (f login7Field) String() string {
	if int(f) < len(login7FieldNames) {
		return login7FieldNames[f]
	}
	return fmt.Sprintf("login7Field(%d)", uint8(f))
}

// secretSpan is where a secret lies in a LOGIN7 message: bytes [start, end) from the start of
// the message (the payload, without packet headers), the origin of every LOGIN7 offset.
type secretSpan struct {
	field      login7Field
	start, end int
}

// LOGIN7 layout (MS-TDS 2.2.6.4): byte offsets into the message.
const (
	login7FixedV70       = 86 // fixed part up to TDS 7.1
	login7FixedV72       = 94 // fixed part from TDS 7.2 on (adds ibChangePassword and cbSSPILong)
	login7OptionFlags3   = 27
	login7PasswordAt     = 44 // ibPassword, cchPassword
	login7ExtensionAt    = 56 // ibExtension, cbExtension
	login7ChangePassAt   = 86 // ibChangePassword, cchChangePassword
	login7FExtension     = 0x10
	featureExtTerminator = 0xFF
	featureFedAuth       = 0x02
	// fedAuthLibraryADAL is the bFedAuthLibrary (the high seven bits of the FEDAUTH feature's
	// first byte) of the workflow in which the server answers LOGIN7 with FEDAUTHINFO and the
	// client sends the token afterwards, in a FEDAUTH_TOKEN message of its own (MS-TDS
	// 2.2.6.4, 2.2.7.12). The other libraries carry the token in the feature itself.
	fedAuthLibraryADAL = 0x02
)

// login7Offsets are the positions of the fixed part's ib fields (u16 offsets of the variable
// fields) before TDS 7.2: HostName, UserName, Password, AppName, ServerName, Extension,
// CltIntName, Language, Database, SSPI, AtchDBFile. TDS 7.2 adds ibChangePassword.
var login7Offsets = [...]int{36, 40, login7PasswordAt, 48, 52, login7ExtensionAt, 60, 64, 68, 78, 82}

var errLogin7 = errors.New("malformed LOGIN7")

// login7 is what the conn must know of a LOGIN7 message to keep its secrets inside TLS.
type login7 struct {
	// secrets are where the password, the new password of a password change and the data of
	// a FEDAUTH feature (which carries the security token) lie.
	secrets []secretSpan
	// laterToken: the FEDAUTH feature asks for the workflow in which the token follows LOGIN7
	// in a message of its own (see fedAuthLibraryADAL).
	laterToken bool
}

// parseLogin7 locates the secrets of the LOGIN7 message msg. A password's span does not end
// at ib + 2*cch: drivers count characters in cch (go-mssqldb counts runes) while the field is
// UTF-16, in which a character outside the Basic Multilingual Plane takes four bytes. So the
// span runs from ib to the next variable field's offset (FeatureExt included) or the end of
// the message, and never shorter than 2*cch. parseLogin7 checks every offset it follows
// against len(msg) and returns an error wrapping errLogin7, naming the field, when one points
// outside the message, the message's Length field is not len(msg), or FeatureExt has no
// terminator. msg is not modified or retained.
func parseLogin7(msg []byte) (login7, error) {
	var l login7
	if len(msg) < login7FixedV70 {
		return l, fmt.Errorf("%w: %d bytes, shorter than the fixed part", errLogin7, len(msg))
	}
	le := binary.LittleEndian
	if n := le.Uint32(msg); n != uint32(len(msg)) {
		return l, fmt.Errorf("%w: Length field %d, message %d bytes", errLogin7, n, len(msg))
	}
	major := le.Uint32(msg[4:]) >> 24 // TDSVersion, e.g. 0x74000004 for 7.4; 0x08000000 for 8.0
	has72 := major != 0x70 && major != 0x71
	has74 := has72 && major != 0x72 && major != 0x73
	if has72 && len(msg) < login7FixedV72 {
		return l, fmt.Errorf("%w: %d bytes, shorter than the TDS 7.2 fixed part", errLogin7, len(msg))
	}
	ext := 0 // ibFeatureExtLong; 0: no FeatureExt
	if has74 && msg[login7OptionFlags3]&login7FExtension != 0 {
		ib, cb := int(le.Uint16(msg[login7ExtensionAt:])), int(le.Uint16(msg[login7ExtensionAt+2:]))
		if cb < 4 || ib+4 > len(msg) {
			return l, fmt.Errorf("%w: extension at %d, %d bytes, in a %d-byte message", errLogin7, ib, cb, len(msg))
		}
		e := le.Uint32(msg[ib:])
		if uint64(e) >= uint64(len(msg)) {
			return l, fmt.Errorf("%w: FeatureExt at %d, past the end (%d)", errLogin7, e, len(msg))
		}
		ext = int(e)
	}
	// next returns the offset of the first variable field after ib, or the end of the message.
	next := func(ib int) int {
		end := len(msg)
		for _, at := range login7Offsets {
			if o := int(le.Uint16(msg[at:])); o > ib && o < end {
				end = o
			}
		}
		if o := int(le.Uint16(msg[login7ChangePassAt:])); has72 && o > ib && o < end {
			end = o
		}
		if ext > ib && ext < end {
			end = ext
		}
		return end
	}
	ucs2 := func(field login7Field, at int) error {
		ib, cch := int(le.Uint16(msg[at:])), int(le.Uint16(msg[at+2:]))
		if cch == 0 {
			return nil
		}
		end := max(ib+2*cch, next(ib))
		if end > len(msg) {
			return fmt.Errorf("%w: %v at %d..%d, past the end (%d)", errLogin7, field, ib, end, len(msg))
		}
		l.secrets = append(l.secrets, secretSpan{field, ib, end})
		return nil
	}
	if err := ucs2(fieldPassword, login7PasswordAt); err != nil {
		return l, err
	}
	if has72 {
		if err := ucs2(fieldChangePassword, login7ChangePassAt); err != nil {
			return l, err
		}
	}
	if ext == 0 {
		return l, nil
	}
	for pos := ext; ; {
		if pos >= len(msg) {
			return l, fmt.Errorf("%w: FeatureExt runs past the end (%d) without its terminator", errLogin7, len(msg))
		}
		id := msg[pos]
		if id == featureExtTerminator {
			return l, nil
		}
		if pos+5 > len(msg) {
			return l, fmt.Errorf("%w: feature 0x%02x at %d: header past the end (%d)", errLogin7, id, pos, len(msg))
		}
		n := uint64(le.Uint32(msg[pos+1:]))
		start := pos + 5
		if uint64(start)+n > uint64(len(msg)) {
			return l, fmt.Errorf("%w: feature 0x%02x at %d: %d data bytes, past the end (%d)", errLogin7, id, pos, n, len(msg))
		}
		end := start + int(n)
		if id == featureFedAuth && n > 0 {
			l.secrets = append(l.secrets, secretSpan{fieldFedAuth, start, end})
			l.laterToken = l.laterToken || msg[start]>>1 == fedAuthLibraryADAL
		}
		pos = end
	}
}
