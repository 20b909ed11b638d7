package tdstest

import (
	"crypto/subtle"
	"fmt"

	l7 "github.com/tdsbridge/tdsbridge/login7"
)

// FEDAUTH in LOGIN7 (MS-TDS 2.2.6.4 FeatureExt, decoded by package login7) and in the login
// response (2.2.7.11 FEATUREEXTACK).
const (
	featureFedAuth = l7.FeatureFedAuth

	fedAuthLibrarySecurityToken = l7.FedAuthLibrarySecurityToken // the client sends the token itself
	fedAuthLibraryADAL          = l7.FedAuthLibraryADAL          // the server sends FEDAUTHINFO first

	fedAuthNonceLen = l7.FedAuthNonceLen

	tokenFeatureExtAck = 0xAE
)

// tokenPrincipal is the user name SQL Server reports in a failed token login.
const tokenPrincipal = "<token-identified principal>"

// fedAuthLogin is the FEDAUTH feature of a LOGIN7 message.
type fedAuthLogin = l7.FedAuth

// decodeFedAuth decodes FEDAUTH FeatureData (see login7.DecodeFedAuth); errors wrap errLogin7.
func decodeFedAuth(d []byte) (*fedAuthLogin, error) {
	f, err := l7.DecodeFedAuth(d)
	if err != nil {
		return nil, err
	}
	return &f, nil
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
	return append(dst, l7.FeatureTerminator)
}
