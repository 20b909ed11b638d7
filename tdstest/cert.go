package tdstest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/testcert"
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
// before now for a day. Every leaf names localhost, 127.0.0.1 and ::1.
func newCertBundle(kind CertKind, now time.Time) (*certBundle, error) {
	opts := []testcert.Option{testcert.WithTime(now), testcert.WithOrganization("tdstest")}
	switch kind {
	case CertECDSA, CertRSA2048:
		// Self-signed and a CA: clients that use it as a trust anchor (OpenSSL, GnuTLS) accept
		// a CA certificate best.
		c, _, err := testcert.SelfSigned(testcert.LeafOptions{RSA: kind == CertRSA2048}, opts...)
		if err != nil {
			return nil, fmt.Errorf("tdstest: %v certificate: %w", kind, err)
		}
		return &certBundle{cert: c, leaf: c.Leaf, ca: c.Leaf}, nil
	case CertLargeChain:
		b, err := newLargeChain(opts)
		if err != nil {
			return nil, fmt.Errorf("tdstest: %v certificate: %w", kind, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("tdstest: unknown certificate kind %v", kind)
}

// newLargeChain makes root -> intermediate 1 -> intermediate 2 -> leaf; the server sends the
// leaf and both intermediates.
func newLargeChain(opts []testcert.Option) (*certBundle, error) {
	root, err := testcert.NewCA("tdstest root CA", append(opts, testcert.WithMaxPathLen(2))...)
	if err != nil {
		return nil, err
	}
	i1, err := root.Intermediate("tdstest intermediate CA 1", 1)
	if err != nil {
		return nil, err
	}
	i2, err := i1.Intermediate("tdstest intermediate CA 2", 0)
	if err != nil {
		return nil, err
	}
	c, err := i2.Issue(testcert.LeafOptions{ExtraNames: largeChainExtraNames})
	if err != nil {
		return nil, err
	}
	return &certBundle{cert: c, leaf: c.Leaf, ca: root.Root}, nil
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
