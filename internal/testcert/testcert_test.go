package testcert

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// verify checks c's leaf against roots for name with the given usage, using
// the rest of c's chain as intermediates.
func verify(t *testing.T, c tls.Certificate, roots *x509.CertPool, name string, usage x509.ExtKeyUsage) error {
	t.Helper()
	inter := x509.NewCertPool()
	for _, der := range c.Certificate[1:] {
		ic, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		inter.AddCert(ic)
	}
	_, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

func chainSize(c tls.Certificate) int {
	n := 0
	for _, der := range c.Certificate {
		n += len(der)
	}
	return n
}

func TestIssue(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		opts     LeafOptions
		usage    x509.ExtKeyUsage
		names    []string // verifies for these
		notNames []string // and not for these
		chainLen int
		rsa      bool
		minChain int // chain bytes at least
		wantCN   string
	}{
		{name: "default", opts: LeafOptions{}, usage: x509.ExtKeyUsageServerAuth,
			names: []string{"localhost", "127.0.0.1", "::1"}, notNames: []string{"example.com", "10.0.0.1"},
			chainLen: 1, wantCN: "localhost"},
		{name: "names", opts: LeafOptions{DNSNames: []string{"server.test", "localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}},
			usage: x509.ExtKeyUsageServerAuth, names: []string{"server.test", "localhost", "127.0.0.1"},
			notNames: []string{"::1", "other.test"}, chainLen: 1, wantCN: "server.test"},
		{name: "client", opts: LeafOptions{CommonName: "client", Client: true, IncludeRoot: true},
			usage: x509.ExtKeyUsageClientAuth, names: []string{""}, chainLen: 2, wantCN: "client"},
		{name: "rsa", opts: LeafOptions{RSA: true}, usage: x509.ExtKeyUsageServerAuth,
			names: []string{"localhost"}, chainLen: 1, rsa: true, wantCN: "localhost"},
		{name: "large", opts: LeafOptions{ExtraNames: 300, IncludeRoot: true}, usage: x509.ExtKeyUsageServerAuth,
			names: []string{"localhost", "host-0299.testcert.invalid"}, notNames: []string{"host-0300.testcert.invalid"},
			chainLen: 2, minChain: 8192, wantCN: "localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ca.Issue(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Leaf == nil || string(c.Leaf.Raw) != string(c.Certificate[0]) {
				t.Fatal("Leaf is not the first certificate of the chain")
			}
			if len(c.Certificate) != tt.chainLen {
				t.Errorf("chain has %d certificates, want %d", len(c.Certificate), tt.chainLen)
			}
			if tt.opts.IncludeRoot && string(c.Certificate[len(c.Certificate)-1]) != string(ca.Root.Raw) {
				t.Error("IncludeRoot: the chain does not end with the root")
			}
			if c.Leaf.Subject.CommonName != tt.wantCN {
				t.Errorf("CN %q, want %q", c.Leaf.Subject.CommonName, tt.wantCN)
			}
			for _, n := range tt.names {
				if err := verify(t, c, ca.Pool(), n, tt.usage); err != nil {
					t.Errorf("verify %q: %v", n, err)
				}
			}
			for _, n := range tt.notNames {
				if err := verify(t, c, ca.Pool(), n, tt.usage); err == nil {
					t.Errorf("verified for %q", n)
				}
			}
			other := x509.ExtKeyUsageClientAuth
			if tt.usage == x509.ExtKeyUsageClientAuth {
				other = x509.ExtKeyUsageServerAuth
			}
			if err := verify(t, c, ca.Pool(), tt.names[0], other); err == nil {
				t.Errorf("verified for usage %v too", other)
			}
			if err := verify(t, c, x509.NewCertPool(), tt.names[0], tt.usage); err == nil {
				t.Error("verified without the root")
			}
			if n := chainSize(c); n < tt.minChain {
				t.Errorf("chain is %d bytes, want at least %d", n, tt.minChain)
			}
			checkKey(t, c, tt.rsa)
			if _, err := tls.X509KeyPair(pemChain(c), pemKey(t, c)); err != nil {
				t.Errorf("key does not match the certificate: %v", err)
			}
		})
	}
}

func checkKey(t *testing.T, c tls.Certificate, wantRSA bool) {
	t.Helper()
	if wantRSA {
		k, ok := c.PrivateKey.(*rsa.PrivateKey)
		if !ok || k.N.BitLen() != 2048 {
			t.Errorf("key is %T, want RSA 2048", c.PrivateKey)
		}
		if c.Leaf.KeyUsage&x509.KeyUsageKeyEncipherment == 0 {
			t.Error("RSA leaf without keyEncipherment")
		}
		return
	}
	k, ok := c.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || k.Curve.Params().Name != "P-256" {
		t.Errorf("key is %T, want ECDSA P-256", c.PrivateKey)
	}
}

func pemChain(c tls.Certificate) []byte {
	var out []byte
	for _, der := range c.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

func pemKey(t *testing.T, c tls.Certificate) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestIntermediates(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	root, err := NewCA("root", WithMaxPathLen(2), WithTime(now), WithOrganization("org"))
	if err != nil {
		t.Fatal(err)
	}
	i1, err := root.Intermediate("inter 1", 1)
	if err != nil {
		t.Fatal(err)
	}
	i2, err := i1.Intermediate("inter 2", 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := i2.Issue(LeafOptions{ExtraNames: 120})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificate) != 3 || string(c.Certificate[1]) != string(i2.Cert.Raw) || string(c.Certificate[2]) != string(i1.Cert.Raw) {
		t.Fatalf("chain is not leaf, inter 2, inter 1 (%d certificates)", len(c.Certificate))
	}
	if n := chainSize(c); n <= 4096 {
		t.Errorf("chain is %d bytes, want more than 4096", n)
	}
	if i2.Root != root.Cert || i1.Root != root.Cert {
		t.Error("intermediates do not name the root")
	}
	for _, tc := range []struct {
		ca         *CA
		maxPathLen int
		zero       bool
	}{{root, 2, false}, {i1, 1, false}, {i2, 0, true}} {
		if !tc.ca.Cert.IsCA || tc.ca.Cert.MaxPathLen != tc.maxPathLen || tc.ca.Cert.MaxPathLenZero != tc.zero {
			t.Errorf("%s: IsCA %v MaxPathLen %d zero %v", tc.ca.Cert.Subject.CommonName,
				tc.ca.Cert.IsCA, tc.ca.Cert.MaxPathLen, tc.ca.Cert.MaxPathLenZero)
		}
	}
	for _, cert := range []*x509.Certificate{root.Cert, i1.Cert, c.Leaf} {
		if !cert.NotBefore.Equal(now.Add(-time.Hour)) || !cert.NotAfter.Equal(now.Add(24*time.Hour)) {
			t.Errorf("%s: valid %v to %v", cert.Subject.CommonName, cert.NotBefore, cert.NotAfter)
		}
		if len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "org" {
			t.Errorf("%s: organization %v", cert.Subject.CommonName, cert.Subject.Organization)
		}
	}
	// Verify at the chosen time: the chain is valid then.
	inter := x509.NewCertPool()
	inter.AddCert(i1.Cert)
	inter.AddCert(i2.Cert)
	chains, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: "host-0119.testcert.invalid", Roots: root.Pool(),
		Intermediates: inter, CurrentTime: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(chains) != 1 || len(chains[0]) != 4 {
		t.Errorf("verified chains %v", chains)
	}
	// A CA with path length 0 cannot issue a working intermediate.
	i3, err := i2.Intermediate("inter 3", -1)
	if err != nil {
		t.Fatal(err)
	}
	deep, err := i3.Issue(LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inter.AddCert(i3.Cert)
	if _, err := deep.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: root.Pool(),
		Intermediates: inter, CurrentTime: now}); err == nil {
		t.Error("chain longer than the path length constraint verified")
	}
	if i3.Cert.MaxPathLen != -1 {
		t.Errorf("maxPathLen -1: certificate has %d", i3.Cert.MaxPathLen)
	}
	blk, rest := pem.Decode(i2.PEM())
	if blk == nil || blk.Type != "CERTIFICATE" || string(blk.Bytes) != string(root.Cert.Raw) || len(rest) != 0 {
		t.Error("PEM does not hold exactly the root certificate")
	}
}

func TestSelfSigned(t *testing.T) {
	for _, useRSA := range []bool{false, true} {
		c, pool, err := SelfSigned(LeafOptions{RSA: useRSA})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Certificate) != 1 || c.Leaf == nil || !c.Leaf.IsCA || c.Leaf.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Fatalf("rsa %v: not a one-certificate self-signed CA", useRSA)
		}
		if err := c.Leaf.CheckSignatureFrom(c.Leaf); err != nil {
			t.Errorf("rsa %v: not self-signed: %v", useRSA, err)
		}
		for _, n := range []string{"localhost", "127.0.0.1", "::1"} {
			if err := verify(t, c, pool, n, x509.ExtKeyUsageServerAuth); err != nil {
				t.Errorf("rsa %v: verify %q: %v", useRSA, n, err)
			}
		}
		if err := verify(t, c, pool, "example.com", x509.ExtKeyUsageServerAuth); err == nil {
			t.Errorf("rsa %v: verified for example.com", useRSA)
		}
		checkKey(t, c, useRSA)
	}
}

// TestHandshake runs a real mutual TLS handshake over loopback TCP with a
// server and a client certificate from one CA.
func TestHandshake(t *testing.T) {
	ca, err := NewCA("handshake CA")
	if err != nil {
		t.Fatal(err)
	}
	inter, err := ca.Intermediate("handshake intermediate", 0)
	if err != nil {
		t.Fatal(err)
	}
	server, err := inter.Issue(LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(LeafOptions{CommonName: "client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		ts := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{server},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()})
		err = ts.Handshake()
		ts.Close()
		done <- err
	}()
	tc, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{client}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	tc.Close()
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}
