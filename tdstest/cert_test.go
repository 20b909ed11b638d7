package tdstest

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

func TestCertBundle(t *testing.T) {
	now := time.Now()
	for _, kind := range []CertKind{CertECDSA, CertRSA2048, CertLargeChain} {
		t.Run(kind.String(), func(t *testing.T) {
			b, err := newCertBundle(kind, now)
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(b.ca)
			inter := x509.NewCertPool()
			for _, der := range b.cert.Certificate[1:] {
				c, err := x509.ParseCertificate(der)
				if err != nil {
					t.Fatal(err)
				}
				inter.AddCert(c)
			}
			for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
				if _, err := b.leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, Intermediates: inter,
					KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
					t.Errorf("verify for %s: %v", name, err)
				}
			}
			if _, err := b.leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots, Intermediates: inter}); err == nil {
				t.Error("leaf verified for example.com")
			}
			switch kind {
			case CertECDSA:
				if _, ok := b.cert.PrivateKey.(*ecdsa.PrivateKey); !ok {
					t.Errorf("key is %T", b.cert.PrivateKey)
				}
			case CertRSA2048:
				k, ok := b.cert.PrivateKey.(*rsa.PrivateKey)
				if !ok || k.N.BitLen() != 2048 {
					t.Errorf("key is %T, want RSA 2048", b.cert.PrivateKey)
				}
			case CertLargeChain:
				if n := b.chainSize(); n <= 4096 {
					t.Errorf("chain is %d bytes, want more than 4096", n)
				}
				if len(b.cert.Certificate) != 3 || b.ca == b.leaf {
					t.Errorf("chain has %d certificates", len(b.cert.Certificate))
				}
			}
			blk, _ := pem.Decode(b.caPEM())
			if blk == nil || string(blk.Bytes) != string(b.ca.Raw) {
				t.Error("caPEM does not hold the CA certificate")
			}
		})
	}
	if _, err := newCertBundle(CertKind(9), now); err == nil {
		t.Error("unknown kind accepted")
	}
	if CertKind(9).String() != "CertKind(9)" {
		t.Error(CertKind(9).String())
	}
}
