package tdstest

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
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

// TestCertBundleFailures: each certificate kind made to fail verification fails it, for a
// client that trusts the bundle's CA, with the x509 error of its kind.
func TestCertBundleFailures(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		kind CertKind
		want func(error) bool
	}{
		{CertWrongName, func(err error) bool { var e x509.HostnameError; return errors.As(err, &e) }},
		{CertUnknownCA, func(err error) bool { var e x509.UnknownAuthorityError; return errors.As(err, &e) }},
		{CertExpired, isExpired},
		{CertNotYetValid, isExpired},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			b, err := newCertBundle(tc.kind, now)
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(b.ca)
			_, err = b.leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots})
			if !tc.want(err) {
				t.Fatalf("verify: %v", err)
			}
			t.Log(err)
		})
	}
	b, err := newCertBundle(CertNegativeSerial, now)
	if err != nil {
		t.Fatal(err)
	}
	if b.leaf != nil || b.ca != nil {
		t.Fatal("CertNegativeSerial bundle has a parsed certificate")
	}
	blk, _ := pem.Decode(b.caPEM())
	if _, err := x509.ParseCertificate(blk.Bytes); err == nil || !strings.Contains(err.Error(), "negative serial") {
		t.Fatalf("parse CertNegativeSerial: %v, want the negative serial error", err)
	}
}

func isExpired(err error) bool {
	var e x509.CertificateInvalidError
	return errors.As(err, &e) && e.Reason == x509.Expired
}
