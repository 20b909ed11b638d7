package testcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// settings are what the Options of NewCA and SelfSigned set. A CA passes its
// settings on to the intermediates and leaves it makes.
type settings struct {
	now          time.Time
	organization string
	maxPathLen   int // -1: no limit
}

func newSettings(opts []Option) settings {
	s := settings{now: time.Now(), maxPathLen: -1}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// Option changes how NewCA and SelfSigned make their certificates.
type Option func(*settings)

// WithTime makes certificates valid from now-1h to now+24h instead of around
// time.Now. A CA's intermediates and leaves inherit it.
func WithTime(now time.Time) Option { return func(s *settings) { s.now = now } }

// WithOrganization sets the subject's Organization (O). A CA's intermediates
// and leaves inherit it.
func WithOrganization(org string) Option { return func(s *settings) { s.organization = org } }

// WithMaxPathLen limits how many intermediates may follow the root made by
// NewCA (its basic-constraints pathLenConstraint; 0 allows none). The default
// is no limit. SelfSigned ignores it.
func WithMaxPathLen(n int) Option { return func(s *settings) { s.maxPathLen = n } }

// CA is a certificate authority: a root made by NewCA or an intermediate made
// by CA.Intermediate. It is immutable and safe for concurrent use.
type CA struct {
	// Cert is this CA's certificate.
	Cert *x509.Certificate
	// Root is the trust anchor at the top of the chain: Cert itself for a
	// root, the root's certificate for an intermediate.
	Root *x509.Certificate

	key   crypto.Signer
	chain [][]byte // DER of Cert and the intermediates above it, nearest first, without the root
	set   settings
}

// NewCA makes a self-signed root CA with an ECDSA P-256 key and the given
// subject common name.
func NewCA(commonName string, opts ...Option) (*CA, error) {
	set := newSettings(opts)
	key, err := newKey(false)
	if err != nil {
		return nil, err
	}
	tmpl := caTemplate(set, commonName, set.maxPathLen)
	cert, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Root: cert, key: key, set: set}, nil
}

// Intermediate makes a CA certificate signed by ca with the given subject
// common name. maxPathLen limits how many intermediates may follow it (0
// allows none; -1 sets no limit). Leaves the intermediate issues carry it,
// and every intermediate between it and the root, in their chains.
func (ca *CA) Intermediate(commonName string, maxPathLen int) (*CA, error) {
	key, err := newKey(false)
	if err != nil {
		return nil, err
	}
	cert, err := sign(caTemplate(ca.set, commonName, maxPathLen), ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, err
	}
	chain := append([][]byte{cert.Raw}, ca.chain...)
	return &CA{Cert: cert, Root: ca.Root, key: key, chain: chain, set: ca.set}, nil
}

// LeafOptions describe a leaf certificate. The zero value is a server
// certificate for localhost, 127.0.0.1 and ::1 with an ECDSA P-256 key.
type LeafOptions struct {
	// CommonName is the subject CN; empty means the first DNS name, or
	// "localhost" when there is none.
	CommonName string
	// DNSNames and IPs are the subject alternative names. When both are
	// empty the certificate names localhost, 127.0.0.1 and ::1.
	DNSNames []string
	IPs      []net.IP
	// ExtraNames appends that many more DNS names,
	// host-0000.testcert.invalid, host-0001.testcert.invalid, ..., to make
	// the certificate larger (each adds about 30 bytes).
	ExtraNames int
	// Client makes a client certificate (extended key usage clientAuth)
	// instead of a server certificate (serverAuth).
	Client bool
	// RSA uses an RSA 2048-bit key instead of ECDSA P-256 (and adds the
	// keyEncipherment key usage that RSA key exchange needs).
	RSA bool
	// IncludeRoot appends the root certificate to the chain of a leaf made
	// by CA.Issue, as some servers send it.
	IncludeRoot bool
}

// Issue makes a leaf certificate signed by ca. The result's Certificate
// holds the leaf, then the intermediates between ca and the root, nearest
// first (ca itself when it is an intermediate), then the root if
// o.IncludeRoot; Leaf is set.
func (ca *CA) Issue(o LeafOptions) (tls.Certificate, error) {
	key, err := newKey(o.RSA)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := sign(leafTemplate(ca.set, o), ca.Cert, key.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	chain := make([][]byte, 0, len(ca.chain)+2)
	chain = append(chain, leaf.Raw)
	chain = append(chain, ca.chain...)
	if o.IncludeRoot {
		chain = append(chain, ca.Root.Raw)
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// Pool returns a new pool that trusts ca's root.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Root)
	return p
}

// PEM returns ca's root certificate in PEM form ("CERTIFICATE" block), as a
// client's CA file holds it.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Root.Raw})
}

// SelfSigned makes a self-signed leaf certificate described by o (IncludeRoot
// does not apply) and a pool that trusts it. The certificate is also a CA
// (basic constraints CA:TRUE, keyCertSign), so that clients which insist that
// a trust anchor be a CA certificate (OpenSSL, GnuTLS) accept it as one.
func SelfSigned(o LeafOptions, opts ...Option) (tls.Certificate, *x509.CertPool, error) {
	set := newSettings(opts)
	key, err := newKey(o.RSA)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := selfSignedTemplate(set, o)
	cert, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}, pool, nil
}

// selfSignedTemplate is the template of SelfSigned: a leaf that is also a CA.
func selfSignedTemplate(set settings, o LeafOptions) *x509.Certificate {
	tmpl := leafTemplate(set, o)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	return tmpl
}

func newKey(useRSA bool) (crypto.Signer, error) {
	if useRSA {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("testcert: generate RSA key: %w", err)
		}
		return k, nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testcert: generate ECDSA key: %w", err)
	}
	return k, nil
}

func subject(set settings, commonName string) pkix.Name {
	n := pkix.Name{CommonName: commonName}
	if set.organization != "" {
		n.Organization = []string{set.organization}
	}
	return n
}

func caTemplate(set settings, commonName string, maxPathLen int) *x509.Certificate {
	t := &x509.Certificate{
		Subject:               subject(set, commonName),
		NotBefore:             set.now.Add(-time.Hour),
		NotAfter:              set.now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            maxPathLen,
		MaxPathLenZero:        maxPathLen == 0,
	}
	if maxPathLen < 0 {
		t.MaxPathLen = -1
	}
	return t
}

func leafTemplate(set settings, o LeafOptions) *x509.Certificate {
	dns := append([]string(nil), o.DNSNames...)
	ips := append([]net.IP(nil), o.IPs...)
	if len(dns) == 0 && len(ips) == 0 {
		dns = []string{"localhost"}
		ips = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	for i := 0; i < o.ExtraNames; i++ {
		dns = append(dns, fmt.Sprintf("host-%04d.testcert.invalid", i))
	}
	cn := o.CommonName
	if cn == "" {
		cn = "localhost"
		if len(dns) > 0 {
			cn = dns[0]
		}
	}
	usage := x509.ExtKeyUsageServerAuth
	if o.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	ku := x509.KeyUsageDigitalSignature
	if o.RSA {
		ku |= x509.KeyUsageKeyEncipherment
	}
	return &x509.Certificate{
		Subject:     subject(set, cn),
		NotBefore:   set.now.Add(-time.Hour),
		NotAfter:    set.now.Add(24 * time.Hour),
		KeyUsage:    ku,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames:    dns,
		IPAddresses: ips,
	}
}

// randomSerial returns a random positive 120-bit serial number.
func randomSerial() (*big.Int, error) {
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("testcert: serial number: %w", err)
	}
	return sn, nil
}

// sign gives tmpl a random serial number, signs it with parentKey and parses
// the result.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer) (*x509.Certificate, error) {
	sn, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = sn
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		return nil, fmt.Errorf("testcert: create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("testcert: parse certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return c, nil
}
