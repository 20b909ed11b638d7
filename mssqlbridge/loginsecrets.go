package mssqlbridge

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/login7"
)

// secretField names a secret of a LOGIN7 message (MS-TDS 2.2.6.4).
type secretField uint8

const (
	fieldPassword       secretField = iota // ibPassword/cchPassword
	fieldChangePassword                    // ibChangePassword/cchChangePassword (TDS 7.2+)
	fieldFedAuth                           // FEDAUTH feature data in FeatureExt (TDS 7.4+)
)

var secretFieldNames = [...]string{fieldPassword: "password", fieldChangePassword: "new password", fieldFedAuth: "FEDAUTH token"}

func (f secretField) String() string {
	if int(f) < len(secretFieldNames) {
		return secretFieldNames[f]
	}
	return fmt.Sprintf("secretField(%d)", uint8(f))
}

// secretSpan is where a secret lies in a LOGIN7 message: bytes [start, end) from the start of
// the message (the payload, without packet headers), the origin of every LOGIN7 offset.
type secretSpan struct {
	field      secretField
	start, end int
}

// loginSecrets is what the conn must know of a LOGIN7 message to keep its secrets inside TLS.
type loginSecrets struct {
	// secrets are where the password, the new password of a password change and the data of
	// a FEDAUTH feature (which carries the security token) lie.
	secrets []secretSpan
	// laterToken: the FEDAUTH feature asks for the workflow in which the server answers with
	// FEDAUTHINFO and the token follows LOGIN7 in a FEDAUTH_TOKEN message of its own
	// (login7.FedAuthLibraryADAL); the other libraries carry the token in the feature itself.
	laterToken bool
}

// parseLogin7 locates the secrets of the LOGIN7 message msg with login7.Parse, which checks
// every offset against the message and returns an error wrapping login7.ErrMalformed, naming
// the field, when one points outside it. A password's span is its login7 Extent, from ib to
// the next variable field or the end of the message, not ib + 2*cch: drivers count characters
// in cch (go-mssqldb counts runes) while the field is UTF-16. msg is not modified or retained.
func parseLogin7(msg []byte) (loginSecrets, error) {
	var s loginSecrets
	l, err := login7.Parse(msg)
	if err != nil {
		return s, err
	}
	for _, f := range [...]struct {
		secret secretField
		field  login7.Field
	}{{fieldPassword, login7.FieldPassword}, {fieldChangePassword, login7.FieldChangePassword}} {
		if sp := l.Extent(f.field); sp.Len() > 0 {
			s.secrets = append(s.secrets, secretSpan{f.secret, sp.Start, sp.End})
		}
	}
	for _, f := range l.Features {
		if f.ID != login7.FeatureFedAuth || f.Data.Len() == 0 {
			continue
		}
		s.secrets = append(s.secrets, secretSpan{fieldFedAuth, f.Data.Start, f.Data.End})
		lib, _ := login7.FedAuthLibraryOf(msg[f.Data.Start:f.Data.End])
		s.laterToken = s.laterToken || lib == login7.FedAuthLibraryADAL
	}
	return s, nil
}
