package tdstest

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

// CertKind selects the certificate a Server presents.
type CertKind uint8

const (
	// CertECDSA is a self-signed ECDSA P-256 certificate (the default).
	CertECDSA CertKind = iota
	// CertRSA2048 is a self-signed RSA 2048-bit certificate.
	CertRSA2048
	// CertLargeChain is a chain root -> intermediate -> intermediate -> leaf whose leaf carries a
	// long list of extra DNS names, so that the chain the server sends is larger than 4096 bytes
	// and the server's handshake flight spans several PRELOGIN packets. Clients must trust the
	// root (Server.CACertificate), not the leaf.
	CertLargeChain
)

// String returns the name of the constant.
func (k CertKind) String() string {
	switch k {
	case CertECDSA:
		return "CertECDSA"
	case CertRSA2048:
		return "CertRSA2048"
	case CertLargeChain:
		return "CertLargeChain"
	}
	return fmt.Sprintf("CertKind(%d)", uint8(k))
}

// largeChainExtraNames is how many extra DNS names the CertLargeChain leaf carries.
const largeChainExtraNames = 120

// certBundle is the server's certificate material. It is immutable once built.
type certBundle struct {
	cert tls.Certificate   // chain leaf first, without the root; Leaf set
	leaf *x509.Certificate // the server's certificate
	ca   *x509.Certificate // the trust anchor: the root, or the leaf itself when self-signed
}

// newCertBundle generates fresh keys and certificates of the given kind, valid from an hour
// before now for a day. Every leaf names localhost and 127.0.0.1 (and ::1).
func newCertBundle(kind CertKind, now time.Time) (*certBundle, error) {
	switch kind {
	case CertECDSA, CertRSA2048:
		key, err := newKey(kind)
		if err != nil {
			return nil, err
		}
		tmpl := leafTemplate(now, 0)
		// Self-signed: the certificate is its own issuer, and clients that use it as a trust
		// anchor (OpenSSL, GnuTLS) accept a CA certificate best.
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		leaf, err := signCert(tmpl, tmpl, key.Public(), key)
		if err != nil {
			return nil, err
		}
		return &certBundle{
			cert: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf},
			leaf: leaf,
			ca:   leaf,
		}, nil
	case CertLargeChain:
		return newLargeChain(now)
	}
	return nil, fmt.Errorf("tdstest: unknown certificate kind %v", kind)
}

func newKey(kind CertKind) (crypto.Signer, error) {
	if kind == CertRSA2048 {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("tdstest: generate RSA key: %w", err)
		}
		return k, nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tdstest: generate ECDSA key: %w", err)
	}
	return k, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("tdstest: certificate serial number: %w", err)
	}
	return n, nil
}

// leafTemplate is a server certificate template for localhost and 127.0.0.1 with extra DNS
// names host-0.tdstest.invalid ... host-(extra-1).tdstest.invalid.
func leafTemplate(now time.Time, extra int) *x509.Certificate {
	dns := []string{"localhost"}
	for i := 0; i < extra; i++ {
		dns = append(dns, fmt.Sprintf("host-%03d.tdstest.invalid", i))
	}
	return &x509.Certificate{
		Subject:     pkix.Name{Organization: []string{"tdstest"}, CommonName: "localhost"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dns,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
}

func caTemplate(now time.Time, name string, maxPathLen int) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{Organization: []string{"tdstest"}, CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            maxPathLen,
		MaxPathLenZero:        maxPathLen == 0,
	}
}

// signCert fills the serial number, signs tmpl with parentKey and parses the result.
func signCert(tmpl, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer) (*x509.Certificate, error) {
	sn, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = sn
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		return nil, fmt.Errorf("tdstest: create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("tdstest: parse certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return c, nil
}

func newLargeChain(now time.Time) (*certBundle, error) {
	type level struct {
		tmpl *x509.Certificate
		key  crypto.Signer
		cert *x509.Certificate
	}
	levels := []*level{
		{tmpl: caTemplate(now, "tdstest root CA", 2)},
		{tmpl: caTemplate(now, "tdstest intermediate CA 1", 1)},
		{tmpl: caTemplate(now, "tdstest intermediate CA 2", 0)},
		{tmpl: leafTemplate(now, largeChainExtraNames)},
	}
	for i, l := range levels {
		key, err := newKey(CertECDSA)
		if err != nil {
			return nil, err
		}
		l.key = key
		parent, parentKey := l.tmpl, key
		if i > 0 {
			parent, parentKey = levels[i-1].cert, levels[i-1].key
		}
		c, err := signCert(l.tmpl, parent, key.Public(), parentKey)
		if err != nil {
			return nil, err
		}
		l.cert = c
	}
	leaf := levels[3]
	chain := [][]byte{leaf.cert.Raw, levels[2].cert.Raw, levels[1].cert.Raw}
	return &certBundle{
		cert: tls.Certificate{Certificate: chain, PrivateKey: leaf.key, Leaf: leaf.cert},
		leaf: leaf.cert,
		ca:   levels[0].cert,
	}, nil
}

// chainSize is the number of DER bytes of the chain the server sends.
func (b *certBundle) chainSize() int {
	n := 0
	for _, c := range b.cert.Certificate {
		n += len(c)
	}
	return n
}

// caPEM is the trust anchor in PEM form.
func (b *certBundle) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.ca.Raw})
}
