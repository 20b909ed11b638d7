package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// Sentinel errors. Connection errors wrap them (and, where there is one, the cause from
// prelogin, crypto/tls or crypto/x509); test for them with errors.Is.
var (
	// ErrServerNoEncryption: encrypt=true (or strict) and the server replied that it does not
	// support encryption (NOT_SUP), or offered it for the login only (OFF). No LOGIN7 byte
	// was sent. It is prelogin.ErrServerNoEncryption (the same value), so that callers of this
	// package need not import prelogin; the error returned is a *prelogin.NegotiationError
	// naming both ENCRYPTION values, wrapped.
	ErrServerNoEncryption = prelogin.ErrServerNoEncryption
	// ErrServerRequiresEncryption: encrypt=disable and the server requires encryption. It is
	// prelogin.ErrServerRequiresEncryption (the same value), wrapped as ErrServerNoEncryption is.
	ErrServerRequiresEncryption = prelogin.ErrServerRequiresEncryption
	// ErrMalformedReply: the server's PRELOGIN reply is not a well-formed PRELOGIN response
	// (wrong packet type, truncated, longer than 4096 bytes, a reply prelogin.SetReplyEncryption
	// refuses: a bad option table, no ENCRYPTION option or a bad one; an ENCRYPTION value outside
	// the negotiation table); the error says what was wrong. Options the bridge and the driver
	// do not act on may have any length.
	ErrMalformedReply = errors.New("mssqlbridge: malformed PRELOGIN reply")
	// ErrCertificate: the server's certificate did not verify (or could not be parsed).
	// Returned as a *CertificateError, which names the host and wraps the cause, itself
	// wrapped by a diagnosis when one applies (see tlserrors.go).
	ErrCertificate = errors.New("mssqlbridge: certificate verification failed")
	// ErrCertificateFile: the DSN's certificate file could not be read or holds no
	// certificate. Returned as a *CertificateFileError naming the file.
	ErrCertificateFile = errors.New("mssqlbridge: cannot load certificate file")
	// ErrUnexpectedWrite: the driver wrote something the conn cannot place in the protocol
	// (its first packet is not PRELOGIN, or, in login-only mode, the packet after the
	// handshake is not LOGIN7). The connection is refused before anything is sent.
	ErrUnexpectedWrite = errors.New("mssqlbridge: unexpected packet from the driver")
	// ErrSecretOutsideTLS: in login-only encryption, where only the first LOGIN7 packet
	// travels inside TLS, a secret of the LOGIN7 message (the password, the new password of a
	// password change, or a FEDAUTH security token) would lie past that packet, even with the
	// first packet as large as the packet size allows. The connection is refused before any
	// byte of the LOGIN7 message is sent; the error names the field and the packet size that
	// would carry it. Raise the packet size, or use encrypt=true. It is also the error of a
	// login-only LOGIN7 that asks for federated authentication in which the token follows
	// LOGIN7 in a FEDAUTH_TOKEN message of its own (go-mssqldb's NewActiveDirectoryTokenConnector
	// and most azuread methods), and of such a message itself: it would travel in plaintext.
	// Use encrypt=true.
	ErrSecretOutsideTLS = errors.New("mssqlbridge: a LOGIN7 secret would travel outside TLS")
	// ErrDriverEncryption: the connector's own encryption is on although its Dialer is this
	// package's (see Dialer): its PRELOGIN asks for encryption (encrypt=true or false), or it
	// started its own TLS handshake (encrypt=strict). The connection is refused before
	// anything is sent. Build the connector from Dialer.DriverConfig or DriverDSN.
	ErrDriverEncryption = errors.New("mssqlbridge: the connector's own encryption is on; build it with encrypt=disable")
)

// errClosed is returned by calls on a closed conn; it matches net.ErrClosed.
var errClosed = fmt.Errorf("mssqlbridge: %w", net.ErrClosed)

// CertificateError reports that the server's certificate did not verify for Host. Err is the
// cause, reachable with errors.As: from crypto/x509 or crypto/tls (for example
// x509.HostnameError or x509.UnknownAuthorityError, also for a hostNameInCertificate
// containing ':' whose common name does not match), the mismatch of a serverCertificate, or
// the error returned by a VerifyPeerCertificate or VerifyConnection callback of the TLS
// configuration in use. When crypto/tls verified the chain itself, errors.As also finds the
// *tls.CertificateVerificationError it returned (whose Err is Err), with the certificates the
// server sent in its UnverifiedCertificates.
type CertificateError struct {
	Host string // the name (or IP address) the certificate was checked against
	Err  error

	verification *tls.CertificateVerificationError // crypto/tls's error around Err, or nil
}

func (e *CertificateError) Error() string {
	return fmt.Sprintf("mssqlbridge: certificate verification failed for host %q: %v", e.Host, e.Err)
}

// Unwrap returns ErrCertificate and the cause, then crypto/tls's
// *tls.CertificateVerificationError when there is one.
func (e *CertificateError) Unwrap() []error {
	if e.verification != nil {
		return []error{ErrCertificate, e.Err, e.verification}
	}
	return []error{ErrCertificate, e.Err}
}

// CertificateFileError reports that the DSN's certificate file could not be loaded. It is
// returned by every connection that needed the file.
type CertificateFileError struct {
	File string
	Err  error
}

func (e *CertificateFileError) Error() string {
	return fmt.Sprintf("mssqlbridge: cannot load certificate file %q: %v", e.File, e.Err)
}

// Unwrap returns ErrCertificateFile and the cause.
func (e *CertificateFileError) Unwrap() []error { return []error{ErrCertificateFile, e.Err} }

// asCertificateError returns a *CertificateError for host when err is a certificate
// verification failure, and err unchanged otherwise.
func asCertificateError(host string, err error) error {
	var (
		verr  *tls.CertificateVerificationError
		cberr *verifyError
		herr  x509.HostnameError
		uaerr x509.UnknownAuthorityError
		cierr x509.CertificateInvalidError
		srerr x509.SystemRootsError
	)
	switch {
	case errors.As(err, &verr):
		return &CertificateError{Host: host, Err: verr.Err, verification: verr}
	case errors.As(err, &cberr):
		return &CertificateError{Host: host, Err: cberr.err}
	case errors.As(err, &herr), errors.As(err, &uaerr), errors.As(err, &cierr), errors.As(err, &srerr):
		return &CertificateError{Host: host, Err: err}
	}
	return err
}
