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
)

var errLogin7 = errors.New("malformed LOGIN7")

// login7Secrets returns where the secrets of the LOGIN7 message msg lie: the password, the new
// password of a password change, and the data of a FEDAUTH feature (which carries the
// security token). It checks every offset it follows against len(msg) and returns an error
// wrapping errLogin7, naming the field, when one points outside the message, the message's
// Length field is not len(msg), or FeatureExt has no terminator. msg is not modified or
// retained.
func login7Secrets(msg []byte) ([]secretSpan, error) {
	if len(msg) < login7FixedV70 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the fixed part", errLogin7, len(msg))
	}
	le := binary.LittleEndian
	if n := le.Uint32(msg); n != uint32(len(msg)) {
		return nil, fmt.Errorf("%w: Length field %d, message %d bytes", errLogin7, n, len(msg))
	}
	major := le.Uint32(msg[4:]) >> 24 // TDSVersion, e.g. 0x74000004 for 7.4; 0x08000000 for 8.0
	has72 := major != 0x70 && major != 0x71
	has74 := has72 && major != 0x72 && major != 0x73
	var spans []secretSpan
	ucs2 := func(field login7Field, at int) error {
		ib, cch := int(le.Uint16(msg[at:])), int(le.Uint16(msg[at+2:]))
		if cch == 0 {
			return nil
		}
		if end := ib + 2*cch; end > len(msg) {
			return fmt.Errorf("%w: %v at %d..%d, past the end (%d)", errLogin7, field, ib, end, len(msg))
		}
		spans = append(spans, secretSpan{field, ib, ib + 2*cch})
		return nil
	}
	if err := ucs2(fieldPassword, login7PasswordAt); err != nil {
		return nil, err
	}
	if !has72 {
		return spans, nil
	}
	if len(msg) < login7FixedV72 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the TDS 7.2 fixed part", errLogin7, len(msg))
	}
	if err := ucs2(fieldChangePassword, login7ChangePassAt); err != nil {
		return nil, err
	}
	if !has74 || msg[login7OptionFlags3]&login7FExtension == 0 {
		return spans, nil
	}
	ib, cb := int(le.Uint16(msg[login7ExtensionAt:])), int(le.Uint16(msg[login7ExtensionAt+2:]))
	if cb < 4 || ib+4 > len(msg) {
		return nil, fmt.Errorf("%w: extension at %d, %d bytes, in a %d-byte message", errLogin7, ib, cb, len(msg))
	}
	ext := le.Uint32(msg[ib:]) // ibFeatureExtLong; 0: no FeatureExt
	if ext == 0 {
		return spans, nil
	}
	if uint64(ext) >= uint64(len(msg)) {
		return nil, fmt.Errorf("%w: FeatureExt at %d, past the end (%d)", errLogin7, ext, len(msg))
	}
	for pos := int(ext); ; {
		if pos >= len(msg) {
			return nil, fmt.Errorf("%w: FeatureExt runs past the end (%d) without its terminator", errLogin7, len(msg))
		}
		id := msg[pos]
		if id == featureExtTerminator {
			return spans, nil
		}
		if pos+5 > len(msg) {
			return nil, fmt.Errorf("%w: feature 0x%02x at %d: header past the end (%d)", errLogin7, id, pos, len(msg))
		}
		n := uint64(le.Uint32(msg[pos+1:]))
		start := pos + 5
		if uint64(start)+n > uint64(len(msg)) {
			return nil, fmt.Errorf("%w: feature 0x%02x at %d: %d data bytes, past the end (%d)", errLogin7, id, pos, n, len(msg))
		}
		end := start + int(n)
		if id == featureFedAuth && n > 0 {
			spans = append(spans, secretSpan{fieldFedAuth, start, end})
		}
		pos = end
	}
}
