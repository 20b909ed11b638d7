package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The TLS diagnoses. A failed TLS handshake is returned as one of these types when its cause
// is recognized, so that the error says what went wrong and what to do; test for them with
// errors.As. The cause from crypto/tls or crypto/x509 stays reachable with errors.As (except
// for CertificateParseError, whose x509 error crypto/tls keeps only as text). The certificate
// diagnoses wrap a *CertificateError, so errors.Is(err, ErrCertificate) holds for them and
// errors.As finds the *CertificateError (its Host is the name checked, its Err the cause).
// Any other handshake failure is returned wrapped, with the host, and no diagnosis.

// TLSVersionError reports that the server and this connection have no TLS version in common:
// the server refused every version the connection offered (alert protocol_version), or chose
// one outside them; or that the connection had no version to offer at all (MinVersion above
// MaxVersion), and sent nothing. Older SQL Server versions without the TLS 1.2 update speak
// only TLS 1.0 or 1.1, which Go no longer offers by default (its minimum is TLS 1.2 since Go
// 1.22). Inside PRELOGIN (encrypt=true or false) the bridge offers TLS 1.2 at most (see
// Capped), so a server that speaks only TLS 1.3 there refuses it too.
type TLSVersionError struct {
	Host       string // the host dialed
	MinVersion uint16 // the lowest version this connection offered (tls.VersionTLS12, ...)
	MaxVersion uint16 // the highest
	// ServerVersion is the version the server chose, when it chose one this connection did
	// not offer; 0 when it refused with an alert (the server does not say which versions it
	// speaks).
	ServerVersion uint16
	Strict        bool // encrypt=strict (TDS 8.0)
	// Capped: MaxVersion is TLS 1.2 because the bridge caps TLS inside PRELOGIN there (SQL
	// Server speaks TLS 1.3 only with TDS 8.0), not because the TLS configuration asked for
	// it. tlsmin=1.3 lifts the cap when every packet is encrypted, never for login-only
	// encryption; encrypt=strict has no cap.
	Capped bool
	// LoginOnly: tlsmin=1.3 asked for TLS 1.3 and the server offered encryption for the login
	// only (it answered ENCRYPTION=OFF to encrypt=false), whose TLS the bridge runs at TLS 1.2
	// at most (a TLS 1.3 server's session tickets after the handshake would reach the driver
	// as TDS bytes once the connection turns to plaintext): no version was left to offer.
	LoginOnly bool
	Err       error // the crypto/tls error
}

// TLS version remedies, shared by the texts of TLSVersionError.
const (
	tls13Remedy = "tlsmin=1.3 in the DSN lifts the cap where every packet is encrypted (encrypt=true; login-only encryption stays at TLS 1.2)," +
		" and encrypt=strict connects with TDS 8.0, where TLS 1.3 is the norm"
	tls10Remedy = "tlsmin=1.0 in the DSN sets tls.Config.MinVersion to TLS 1.0 for this connector's connections and lets them connect," +
		" at a cost: TLS 1.0 and 1.1 are deprecated (RFC 8996), with CBC cipher suites open to padding-oracle attacks," +
		" a SHA-1 based handshake and no AEAD; prefer updating the server to TLS 1.2"
)

func (e *TLSVersionError) Error() string {
	var b strings.Builder
	if e.MinVersion > e.MaxVersion {
		fmt.Fprintf(&b, "mssqlbridge: TLS handshake with %s: no TLS version to offer: the minimum is %s and the maximum %s",
			e.Host, tls.VersionName(e.MinVersion), tls.VersionName(e.MaxVersion))
		if e.LoginOnly {
			b.WriteString("; tlsmin=1.3 asks for TLS 1.3, and the server offers encryption for the login only" +
				" (it answered ENCRYPTION=OFF to encrypt=false), which this bridge runs with TLS 1.2 at most" +
				" (a TLS 1.3 server's session tickets after the handshake would reach the driver as TDS bytes once the connection turns to plaintext);" +
				" connect with encrypt=true, where tlsmin=1.3 lifts the bridge's TLS 1.2 cap, or with encrypt=strict (TDS 8.0), or without tlsmin=1.3")
		} else {
			b.WriteString(" (the TLS configuration in use sets MaxVersion below MinVersion)")
		}
		fmt.Fprintf(&b, "; nothing was sent to the server: %v", e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "mssqlbridge: TLS handshake with %s: no TLS version in common: this connection offers %s", e.Host, versionRange(e.MinVersion, e.MaxVersion))
	if e.Capped {
		b.WriteString(" (the bridge caps TLS inside PRELOGIN at 1.2, as SQL Server speaks TLS 1.3 only with TDS 8.0)")
	}
	if e.ServerVersion != 0 {
		fmt.Fprintf(&b, ", the server chose %s", tls.VersionName(e.ServerVersion))
	} else {
		b.WriteString(", the server refused them")
	}
	switch {
	case e.MinVersion >= tls.VersionTLS13 && !e.Strict:
		b.WriteString("; SQL Server speaks TLS 1.3 only with TDS 8.0: use encrypt=strict, or tlsmin=1.2")
	case e.Capped && (e.ServerVersion > e.MaxVersion || e.ServerVersion == 0 && e.MinVersion <= tls.VersionTLS10):
		// It chose TLS 1.3, or refused every version up to 1.2: it speaks only TLS 1.3.
		b.WriteString(" (it speaks only TLS 1.3); " + tls13Remedy)
	case e.Capped && e.ServerVersion == 0:
		b.WriteString(" (it speaks either only TLS 1.3 or only TLS 1.0 or 1.1, and does not say which)." +
			" If only TLS 1.3: " + tls13Remedy + "." +
			" If only TLS 1.0 or 1.1, as older SQL Server versions without the TLS 1.2 update do: " + tls10Remedy)
	case e.MinVersion > tls.VersionTLS10:
		b.WriteString(" (it likely speaks only TLS 1.0 or 1.1, as older SQL Server versions without the TLS 1.2 update do); " + tls10Remedy)
	default:
		b.WriteString(" (TLS 1.0 is the lowest version Go implements)")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the crypto/tls error.
func (e *TLSVersionError) Unwrap() error { return e.Err }

// CipherSuiteError reports that the server refused the handshake with the alert
// handshake_failure, most likely because it shares no cipher suite with this connection. The
// client cannot see which suites the server wanted: the server only refuses. Older SQL Server
// versions, and servers on older Windows, speak only RSA key exchange (TLS_RSA_WITH_AES_*),
// which Go leaves out by default; WithRSAKeyExchange (or rsakeyexchange=true in the DSN)
// offers it on this connector's connections only.
type CipherSuiteError struct {
	Host string // the host dialed
	// RSAKeyExchange: the connection already offered the RSA key exchange suites.
	RSAKeyExchange bool
	Err            error // the crypto/tls error
}

func (e *CipherSuiteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mssqlbridge: TLS handshake with %s: the server refused the handshake (alert handshake_failure),"+
		" most likely because it shares no cipher suite with this connection (a server does not say which suites it wants)", e.Host)
	if e.RSAKeyExchange {
		b.WriteString("; RSA key exchange was already offered: the server may want suites Go leaves out for good" +
			" (3DES, RC4, CBC-SHA256) or reject something else (curves, signature algorithms, a client certificate)")
	} else {
		b.WriteString("; older SQL Server versions speak only RSA key exchange (TLS_RSA_WITH_AES_*), which Go leaves out by default:" +
			" WithRSAKeyExchange() or rsakeyexchange=true in the DSN offers it on this connector's connections only," +
			" at a cost: no forward secrecy (whoever obtains the server's private key later can decrypt recorded sessions)")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the crypto/tls error.
func (e *CipherSuiteError) Unwrap() error { return e.Err }

// TDS8UnsupportedError reports that, with encrypt=strict, the server closed or reset the
// connection during the TLS handshake without sending a byte: most likely it does not speak
// TDS 8.0, read the TLS ClientHello that TDS 8.0 sends first as a TDS packet header, and gave
// up (SQL Server before 2022 and Babelfish for PostgreSQL do). encrypt=true runs TLS inside
// PRELOGIN instead (TDS 7.x), which such servers speak, and still encrypts every packet.
type TDS8UnsupportedError struct {
	Host  string // the host dialed
	Reset bool   // the server reset the connection, rather than closing it
	Err   error  // the socket's error, as crypto/tls returned it
}

func (e *TDS8UnsupportedError) Error() string {
	how := "closed the connection"
	if e.Reset {
		how = "reset the connection"
	}
	return fmt.Sprintf("mssqlbridge: TLS handshake with %s: the server %s without answering the TLS ClientHello that encrypt=strict (TDS 8.0) sends first:"+
		" it may not speak TDS 8.0 (SQL Server before 2022 and Babelfish for PostgreSQL read a ClientHello as a TDS packet header and close);"+
		" connect with encrypt=true, which runs TLS inside PRELOGIN (TDS 7.x) and still encrypts every packet: %v", e.Host, how, e.Err)
}

// Unwrap returns the socket's error.
func (e *TDS8UnsupportedError) Unwrap() error { return e.Err }

// HostnameMismatchError reports that the server's certificate does not name the host it was
// checked against (CertificateError.Host). It wraps the *CertificateError, whose Err is the
// x509.HostnameError.
type HostnameMismatchError struct {
	*CertificateError
	DNSNames    []string // the certificate's DNS names
	IPAddresses []net.IP // the certificate's IP addresses
	// CommonName is the subject's common name, which Go does not match against the host (it
	// reads only the subject alternative names above).
	CommonName string
	// FixedName: the name checked was fixed by hostNameInCertificate or by a ServerName of the
	// caller's tls.Config, instead of following the host dialed.
	FixedName bool
	Dialed    string // the host dialed
	DSNHost   string // the DSN's host
	// Redirected: Dialed is not DSNHost, so the connection follows a routing redirect
	// (ENVCHANGE type 20) or goes to the failover partner. The certificate is then checked
	// against the routed host's name, as go-mssqldb does, unless FixedName.
	Redirected bool
}

func (e *HostnameMismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mssqlbridge: certificate verification failed for host %q: ", e.Host)
	names := certNames(e.DNSNames, e.IPAddresses)
	if len(names) == 0 {
		fmt.Fprintf(&b, "the certificate has no subject alternative names (Go ignores its common name %q)", e.CommonName)
	} else {
		fmt.Fprintf(&b, "the certificate names %s", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, ", not %q", e.Host)
	switch {
	case e.FixedName:
		b.WriteString(" (the name set by hostNameInCertificate or the caller's tls.Config)")
	case e.Redirected:
		fmt.Fprintf(&b, " (the host the login was redirected to, by routing or to the failover partner; the DSN names %s)", e.DSNHost)
	default:
		b.WriteString(" (the host dialed)")
	}
	if len(names) > 0 {
		b.WriteString("; connect with a name the certificate holds, or set hostNameInCertificate to one of them")
	} else {
		b.WriteString("; give the server a certificate with subject alternative names")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the *CertificateError.
func (e *HostnameMismatchError) Unwrap() error { return e.CertificateError }

// UnknownAuthorityError reports that the server's certificate chain does not lead to a
// certificate this connection trusts: the DSN's certificate file, or the system roots. It
// wraps the *CertificateError, whose Err is the x509.UnknownAuthorityError.
type UnknownAuthorityError struct {
	*CertificateError
	Subject    string // the subject of the certificate whose issuer is unknown
	Issuer     string // its issuer
	SelfSigned bool   // the certificate is its own issuer
	// Strict: encrypt=strict, with which TrustServerCertificate is ignored (as go-mssqldb
	// ignores it).
	Strict bool
}

func (e *UnknownAuthorityError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mssqlbridge: certificate verification failed for host %q: ", e.Host)
	if e.SelfSigned {
		fmt.Fprintf(&b, "the certificate %q is self-signed and not trusted; trust it with certificate=<a PEM or DER file holding it> in the DSN", e.Subject)
	} else {
		fmt.Fprintf(&b, "the certificate %q is issued by %q, an authority this connection does not trust;"+
			" trust it with certificate=<a PEM or DER file holding that CA's certificate> in the DSN", e.Subject, e.Issuer)
	}
	if e.Strict {
		b.WriteString(" (TrustServerCertificate is ignored with encrypt=strict)")
	} else {
		b.WriteString(", or skip verification with TrustServerCertificate=true (which accepts any server, a man in the middle too)")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the *CertificateError.
func (e *UnknownAuthorityError) Unwrap() error { return e.CertificateError }

// CertificateValidityError reports that a certificate of the server's chain is outside its
// validity period: expired (Now after NotAfter) or not yet valid (Now before NotBefore). It
// wraps the *CertificateError, whose Err is the x509.CertificateInvalidError (reason
// x509.Expired).
type CertificateValidityError struct {
	*CertificateError
	Subject             string
	NotBefore, NotAfter time.Time
	// Now is the time of the check: the tls.Config's Time, or the clock read when the error
	// was built, just after the handshake failed.
	Now time.Time
}

// NotYetValid reports whether the certificate is not valid yet (rather than expired).
func (e *CertificateValidityError) NotYetValid() bool { return e.Now.Before(e.NotBefore) }

func (e *CertificateValidityError) Error() string {
	what := "expired"
	if e.NotYetValid() {
		what = "is not valid yet"
	}
	const layout = "2006-01-02 15:04:05Z07:00"
	return fmt.Sprintf("mssqlbridge: certificate verification failed for host %q: the certificate %q %s:"+
		" valid from %s to %s, and it is now %s; renew the server's certificate, or check this machine's clock: %v",
		e.Host, e.Subject, what, e.NotBefore.UTC().Format(layout), e.NotAfter.UTC().Format(layout), e.Now.UTC().Format(layout), e.Err)
}

// Unwrap returns the *CertificateError.
func (e *CertificateValidityError) Unwrap() error { return e.CertificateError }

// CertificateParseError reports that crypto/tls could not parse a certificate the server sent,
// before any verification (so TrustServerCertificate does not help). The self-signed
// certificates of older SQL Server versions have negative serial numbers, which Go 1.23 and
// later reject; the setting Go offers, GODEBUG x509negativeserial=1, is process-wide (there is
// no per-connection equivalent). It wraps the *CertificateError, whose Err is the crypto/tls
// error: crypto/tls keeps the x509 error only as text, in Detail.
type CertificateParseError struct {
	*CertificateError
	Detail         string // the parser's words, for example "x509: negative serial number"
	NegativeSerial bool   // the certificate has a negative serial number
}

func (e *CertificateParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mssqlbridge: certificate verification failed for host %q: crypto/tls cannot parse the server's certificate (%s)", e.Host, e.Detail)
	if e.NegativeSerial {
		b.WriteString("; self-signed certificates of older SQL Server versions have negative serial numbers, which Go 1.23 and later reject:" +
			" GODEBUG=x509negativeserial=1 in the environment (or //go:debug x509negativeserial=1 in the main package) accepts them, for the whole process;" +
			" better, give the server a certificate with a positive serial number")
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the *CertificateError.
func (e *CertificateParseError) Unwrap() error { return e.CertificateError }

// handshakeFacts is what a diagnosis needs to know about the connection.
type handshakeFacts struct {
	name       string // the name the certificate is checked against
	dialed     string // the host dialed
	dsnHost    string // the DSN's host
	fixedName  bool   // name was fixed (hostNameInCertificate, a caller's ServerName)
	minVersion uint16 // the versions offered
	maxVersion uint16
	strict     bool
	rsaKex     bool             // RSA key exchange suites offered
	now        func() time.Time // the handshake's clock
	capped     bool             // maxVersion is the bridge's TLS 1.2 cap inside PRELOGIN
	loginOnly  bool             // login-only encryption although tlsmin=1.3 (see exchange)
	// serverSpoke: a socket read returned bytes before the handshake failed.
	serverSpoke bool
}

// handshakeFacts gathers the facts about a handshake with cfg (as clientTLSConfig returned
// it; allow13: TLS 1.3 allowed).
func (c *conn) handshakeFacts(cfg *tls.Config, allow13 bool) handshakeFacts {
	f := handshakeFacts{
		name:       cfg.ServerName,
		dialed:     c.host,
		dsnHost:    c.settings.host,
		fixedName:  c.settings.hostInCert,
		minVersion: cfg.MinVersion,
		maxVersion: tls.VersionTLS12,
		strict:     c.strict,
		rsaKex:     offersRSAKeyExchange(cfg.CipherSuites),
		now:        cfg.Time,
	}
	if f.name == "" {
		f.name = c.host
	}
	if f.minVersion == 0 {
		f.minVersion = tls.VersionTLS12 // Go's default minimum since Go 1.22
	}
	if allow13 {
		f.maxVersion = tls.VersionTLS13
	}
	// Inside PRELOGIN, exchange allows TLS 1.3 exactly when tlsmin=1.3 asks for it and the
	// outcome is full encryption: with tlsmin=1.3 and no 1.3 allowed, it was login-only.
	f.capped = !allow13 && (cfg.MaxVersion == 0 || cfg.MaxVersion > tls.VersionTLS12)
	f.loginOnly = f.capped && !c.strict && c.settings.allowTLS13(cfg)
	if cfg.MaxVersion != 0 && cfg.MaxVersion < f.maxVersion {
		f.maxVersion = cfg.MaxVersion
	}
	f.serverSpoke = c.lastRead.Load() != 0
	if f.now == nil {
		f.now = time.Now
	}
	return f
}

// The words of crypto/tls errors that carry no type (Go 1.26, handshake_client.go).
const (
	tlsNoVersions         = "tls: no supported versions satisfy MinVersion and MaxVersion"
	tlsUnsupportedVersion = "tls: server selected unsupported protocol version "
	tlsParseCertificate   = "tls: failed to parse certificate from server: "
	x509NegativeSerial    = "negative serial number"
)

// The TLS alerts (RFC 8446 6) a diagnosis recognizes.
const (
	alertHandshakeFailure = 40
	alertProtocolVersion  = 70
)

// diagnoseHandshake returns the diagnosis of err, a failed handshake: one of the types above,
// a *CertificateError for another certificate failure, or nil when err is none of these.
func diagnoseHandshake(f handshakeFacts, err error) error {
	if s := err.Error(); strings.Contains(s, tlsParseCertificate) {
		detail := s[strings.Index(s, tlsParseCertificate)+len(tlsParseCertificate):]
		return &CertificateParseError{
			CertificateError: &CertificateError{Host: f.name, Err: err},
			Detail:           detail,
			NegativeSerial:   strings.Contains(detail, x509NegativeSerial),
		}
	}
	if cerr := asCertificateError(f.name, err); cerr != err {
		return diagnoseCertificate(f, cerr.(*CertificateError))
	}
	if reset, closed := peerClosed(err); closed && f.strict && !f.serverSpoke {
		return &TDS8UnsupportedError{Host: f.dialed, Reset: reset, Err: err}
	}
	versionError := func() *TLSVersionError {
		return &TLSVersionError{Host: f.dialed, MinVersion: f.minVersion, MaxVersion: f.maxVersion, Strict: f.strict,
			Capped: f.capped, LoginOnly: f.loginOnly, Err: err}
	}
	switch {
	case isRemoteAlert(err, alertProtocolVersion), strings.Contains(err.Error(), tlsNoVersions):
		return versionError()
	case strings.Contains(err.Error(), tlsUnsupportedVersion):
		e := versionError()
		s := err.Error()
		hex, _, _ := strings.Cut(s[strings.Index(s, tlsUnsupportedVersion)+len(tlsUnsupportedVersion):], " ")
		if v, perr := strconv.ParseUint(hex, 16, 16); perr == nil {
			e.ServerVersion = uint16(v)
		}
		return e
	case isRemoteAlert(err, alertHandshakeFailure):
		return &CipherSuiteError{Host: f.dialed, RSAKeyExchange: f.rsaKex, Err: err}
	}
	return nil
}

// diagnoseCertificate returns the diagnosis of cerr, or cerr itself when it has none.
func diagnoseCertificate(f handshakeFacts, cerr *CertificateError) error {
	var (
		herr  x509.HostnameError
		uaerr x509.UnknownAuthorityError
		cierr x509.CertificateInvalidError
	)
	switch {
	case errors.As(cerr.Err, &herr) && herr.Certificate != nil:
		c := herr.Certificate
		return &HostnameMismatchError{
			CertificateError: cerr,
			DNSNames:         c.DNSNames,
			IPAddresses:      c.IPAddresses,
			CommonName:       c.Subject.CommonName,
			FixedName:        f.fixedName,
			Dialed:           f.dialed,
			DSNHost:          f.dsnHost,
			Redirected:       !strings.EqualFold(f.dialed, f.dsnHost),
		}
	case errors.As(cerr.Err, &uaerr) && uaerr.Cert != nil:
		c := uaerr.Cert
		return &UnknownAuthorityError{
			CertificateError: cerr,
			Subject:          c.Subject.String(),
			Issuer:           c.Issuer.String(),
			SelfSigned:       c.CheckSignatureFrom(c) == nil,
			Strict:           f.strict,
		}
	case errors.As(cerr.Err, &cierr) && cierr.Reason == x509.Expired && cierr.Cert != nil:
		c := cierr.Cert
		return &CertificateValidityError{
			CertificateError: cerr,
			Subject:          c.Subject.String(),
			NotBefore:        c.NotBefore,
			NotAfter:         c.NotAfter,
			Now:              f.now(),
		}
	}
	return cerr
}

// isRemoteAlert reports whether err is the alert a received from the peer. crypto/tls reports
// it as a *net.OpError with Op "remote error" whose Err is an unexported alert type, whose
// text is the text of tls.AlertError.
func isRemoteAlert(err error, a uint8) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && op.Err.Error() == tls.AlertError(a).Error()
}

// peerClosed reports whether err says the peer ended the connection: closed (EOF) or, with
// reset set, reset.
func peerClosed(err error) (reset, closed bool) {
	switch {
	case errors.Is(err, io.EOF):
		return false, true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true, true
	}
	return false, false
}

// versionRange names the TLS versions from lo to hi.
func versionRange(lo, hi uint16) string {
	if hi == 0 || hi <= lo {
		return tls.VersionName(lo) + " only"
	}
	return tls.VersionName(lo) + " to " + tls.VersionName(hi)
}

// certNames lists a certificate's DNS names and IP addresses.
func certNames(dns []string, ips []net.IP) []string {
	out := append([]string(nil), dns...)
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}
