package testcert

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"
)

// SelfSignedNegativeSerial makes a self-signed certificate like SelfSigned's, but whose serial
// number is negative, as in the self-signed certificates older SQL Server versions generate.
// Go 1.23 and later refuse to parse it ("x509: negative serial number") unless GODEBUG
// x509negativeserial=1 is set, and x509.CreateCertificate refuses to make it, so the DER is
// built here: the certificate is made with a positive serial, its TBSCertificate is decoded,
// the serial replaced by its negation, and the result signed again with the same key and
// algorithm (SHA-256 with ECDSA, or with RSA PKCS #1 v1.5 when o.RSA). The result's Leaf is
// nil: it cannot be parsed without the GODEBUG setting.
func SelfSignedNegativeSerial(o LeafOptions, opts ...Option) (tls.Certificate, error) {
	set := newSettings(opts)
	key, err := newKey(o.RSA)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := selfSignedTemplate(set, o)
	sn, err := randomSerial()
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.SerialNumber = sn
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("testcert: create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	der, err = replaceSerial(der, new(big.Int).Neg(sn), key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// certificateASN1 is an X.509 Certificate (RFC 5280 4.1): the signed TBSCertificate, the
// signature algorithm and the signature.
type certificateASN1 struct {
	TBS       asn1.RawValue
	Algorithm asn1.RawValue
	Signature asn1.BitString
}

// replaceSerial returns der, a certificate signed with SHA-256 by key, with serial as its
// serial number and signed again by key.
func replaceSerial(der []byte, serial *big.Int, key crypto.Signer) ([]byte, error) {
	var c certificateASN1
	if rest, err := asn1.Unmarshal(der, &c); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("testcert: decode certificate: %v (%d trailing bytes)", err, len(rest))
	}
	// TBSCertificate ::= SEQUENCE { version [0] EXPLICIT DEFAULT v1, serialNumber INTEGER, ... }
	var fields []asn1.RawValue
	for rest := c.TBS.Bytes; len(rest) > 0; {
		var f asn1.RawValue
		var err error
		if rest, err = asn1.Unmarshal(rest, &f); err != nil {
			return nil, fmt.Errorf("testcert: decode TBSCertificate: %w", err)
		}
		fields = append(fields, f)
	}
	i := 0
	if len(fields) > 0 && fields[0].Class == asn1.ClassContextSpecific && fields[0].Tag == 0 {
		i = 1 // the version
	}
	if i >= len(fields) || fields[i].Tag != asn1.TagInteger {
		return nil, fmt.Errorf("testcert: TBSCertificate has no serial number")
	}
	sn, err := asn1.Marshal(serial)
	if err != nil {
		return nil, fmt.Errorf("testcert: encode serial number: %w", err)
	}
	var body []byte
	for j, f := range fields {
		if j == i {
			body = append(body, sn...)
		} else {
			body = append(body, f.FullBytes...)
		}
	}
	tbs, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: body})
	if err != nil {
		return nil, fmt.Errorf("testcert: encode TBSCertificate: %w", err)
	}
	digest := sha256.Sum256(tbs)
	sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("testcert: sign TBSCertificate: %w", err)
	}
	out, err := asn1.Marshal(certificateASN1{
		TBS:       asn1.RawValue{FullBytes: tbs},
		Algorithm: c.Algorithm,
		Signature: asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)},
	})
	if err != nil {
		return nil, fmt.Errorf("testcert: encode certificate: %w", err)
	}
	return out, nil
}
