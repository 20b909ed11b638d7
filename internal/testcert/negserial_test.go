package testcert

import (
	"crypto/rand"
	"crypto/x509"
	"math/big"
	"strings"
	"testing"
)

// TestSelfSignedNegativeSerial: x509.CreateCertificate refuses a negative serial number, so
// SelfSignedNegativeSerial builds the DER itself; Go's parser then rejects it with the error
// that names the negative serial, and with GODEBUG x509negativeserial=1 parses it: the serial
// is negative and the signature, over the rewritten TBSCertificate, verifies.
func TestSelfSignedNegativeSerial(t *testing.T) {
	tmpl := leafTemplate(newSettings(nil), LeafOptions{})
	tmpl.SerialNumber = big.NewInt(-1)
	key, err := newKey(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key); err == nil {
		t.Fatal("x509.CreateCertificate accepted a negative serial number")
	}
	for _, rsaKey := range []bool{false, true} {
		c, err := SelfSignedNegativeSerial(LeafOptions{RSA: rsaKey})
		if err != nil {
			t.Fatal(err)
		}
		if c.Leaf != nil || len(c.Certificate) != 1 {
			t.Fatalf("Leaf %v, %d certificates; want nil and 1", c.Leaf, len(c.Certificate))
		}
		_, err = x509.ParseCertificate(c.Certificate[0])
		if err == nil || !strings.Contains(err.Error(), "negative serial number") {
			t.Fatalf("RSA %v: parse: %v, want the negative serial number error", rsaKey, err)
		}
		t.Logf("RSA %v: %v", rsaKey, err)
	}
	t.Setenv("GODEBUG", "x509negativeserial=1")
	for _, rsaKey := range []bool{false, true} {
		c, err := SelfSignedNegativeSerial(LeafOptions{RSA: rsaKey})
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatalf("RSA %v: parse with x509negativeserial=1: %v", rsaKey, err)
		}
		if cert.SerialNumber.Sign() >= 0 {
			t.Fatalf("serial %v, want negative", cert.SerialNumber)
		}
		if err := cert.CheckSignatureFrom(cert); err != nil {
			t.Fatalf("RSA %v: signature: %v", rsaKey, err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: poolOf(cert)}); err != nil {
			t.Fatalf("RSA %v: verify: %v", rsaKey, err)
		}
	}
}

func poolOf(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}
