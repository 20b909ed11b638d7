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
	// CertWrongName is a self-signed ECDSA certificate that names only
	// WrongCertificateName (no IP address): a client that checks it against the host it
	// dialed fails with a host name mismatch even when it trusts CAFile.
	CertWrongName
	// CertUnknownCA is a leaf for localhost, 127.0.0.1 and ::1 issued by a CA ("tdstest
	// unpublished CA") that the server does not publish: CACertificate and CAFile hold another
	// CA ("tdstest published CA"), so a client that trusts CAFile fails with an unknown
	// authority.
	CertUnknownCA
	// CertExpired is a self-signed ECDSA certificate whose validity ended a day ago (valid
	// from 49 hours before Start to 24 hours before it).
	CertExpired
	// CertNotYetValid is a self-signed ECDSA certificate whose validity begins in two days
	// (from 47 hours after Start to 72 hours after it).
	CertNotYetValid
	// CertNegativeSerial is a self-signed RSA 2048-bit certificate with a negative serial
	// number, as the self-signed certificates of older SQL Server versions have (common name
	// SSL_Self_Signed_Fallback, names localhost, 127.0.0.1 and ::1). Go 1.23 and later refuse to
	// parse it unless GODEBUG x509negativeserial=1 is set; so Certificate and CACertificate
	// return nil for it, and CertPool and TLSConfig too; CAFile holds it all the same.
	CertNegativeSerial
)

// WrongCertificateName is the only name the CertWrongName certificate holds.
const WrongCertificateName = "wrong-name.tdstest.invalid"

// certKindNames are the names of the CertKind constants, in order.
var certKindNames = [...]string{
	CertECDSA:          "CertECDSA",
	CertRSA2048:        "CertRSA2048",
	CertLargeChain:     "CertLargeChain",
	CertWrongName:      "CertWrongName",
	CertUnknownCA:      "CertUnknownCA",
	CertExpired:        "CertExpired",
	CertNotYetValid:    "CertNotYetValid",
	CertNegativeSerial: "CertNegativeSerial",
}

// String returns the name of the constant.
func (k CertKind) String() string {
	if int(k) < len(certKindNames) {
		return certKindNames[k]
	}
	return fmt.Sprintf("CertKind(%d)", uint8(k))
}

// largeChainExtraNames is how many extra DNS names the CertLargeChain leaf carries.
const largeChainExtraNames = 120

// certBundle is the server's certificate material. It is immutable once built.
type certBundle struct {
	cert  tls.Certificate   // chain leaf first, without the root; Leaf set unless nil below
	leaf  *x509.Certificate // the server's certificate; nil for CertNegativeSerial
	ca    *x509.Certificate // the trust anchor: the root, or the leaf itself when self-signed; nil like leaf
	caDER []byte            // ca's DER (for CertNegativeSerial, the unparsable leaf's)
}

// newCertBundle generates fresh keys and certificates of the given kind, valid from an hour
// before now for a day unless the kind says otherwise. Every leaf names localhost, 127.0.0.1
// and ::1, except CertWrongName's.
func newCertBundle(kind CertKind, now time.Time) (*certBundle, error) {
	b, err := makeCertBundle(kind, now)
	if err != nil {
		return nil, fmt.Errorf("tdstest: %v certificate: %w", kind, err)
	}
	if b.caDER == nil {
		b.caDER = b.ca.Raw
	}
	return b, nil
}

func makeCertBundle(kind CertKind, now time.Time) (*certBundle, error) {
	opts := []testcert.Option{testcert.WithTime(now), testcert.WithOrganization("tdstest")}
	// Self-signed and a CA: clients that use it as a trust anchor (OpenSSL, GnuTLS) accept a
	// CA certificate best.
	selfSigned := func(o testcert.LeafOptions, opts ...testcert.Option) (*certBundle, error) {
		c, _, err := testcert.SelfSigned(o, opts...)
		if err != nil {
			return nil, err
		}
		return &certBundle{cert: c, leaf: c.Leaf, ca: c.Leaf}, nil
	}
	switch kind {
	case CertECDSA, CertRSA2048:
		return selfSigned(testcert.LeafOptions{RSA: kind == CertRSA2048}, opts...)
	case CertLargeChain:
		return newLargeChain(opts)
	case CertWrongName:
		return selfSigned(testcert.LeafOptions{DNSNames: []string{WrongCertificateName}}, opts...)
	case CertUnknownCA:
		return newUnknownCA(opts)
	case CertExpired:
		return selfSigned(testcert.LeafOptions{}, testcert.WithTime(now.Add(-48*time.Hour)), testcert.WithOrganization("tdstest"))
	case CertNotYetValid:
		return selfSigned(testcert.LeafOptions{}, testcert.WithTime(now.Add(48*time.Hour)), testcert.WithOrganization("tdstest"))
	case CertNegativeSerial:
		c, err := testcert.SelfSignedNegativeSerial(testcert.LeafOptions{RSA: true, CommonName: "SSL_Self_Signed_Fallback"}, opts...)
		if err != nil {
			return nil, err
		}
		return &certBundle{cert: c, caDER: c.Certificate[0]}, nil
	}
	return nil, fmt.Errorf("unknown kind")
}

// newUnknownCA issues the leaf from one CA and publishes another.
func newUnknownCA(opts []testcert.Option) (*certBundle, error) {
	issuer, err := testcert.NewCA("tdstest unpublished CA", opts...)
	if err != nil {
		return nil, err
	}
	published, err := testcert.NewCA("tdstest published CA", opts...)
	if err != nil {
		return nil, err
	}
	c, err := issuer.Issue(testcert.LeafOptions{})
	if err != nil {
		return nil, err
	}
	return &certBundle{cert: c, leaf: c.Leaf, ca: published.Root}, nil
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
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.caDER})
}
