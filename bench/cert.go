package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"

	"github.com/tdsbridge/tdsbridge/internal/testcert"
)

// newSelfSigned makes a self-signed ECDSA P-256 certificate for localhost and 127.0.0.1, valid
// for a day, for the transport child's TLS listeners.
func newSelfSigned() (tls.Certificate, error) {
	cert, _, err := testcert.SelfSigned(testcert.LeafOptions{DNSNames: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("bench: %w", err)
	}
	return cert, nil
}

// certPoolFromBase64 parses a base64 DER certificate (as the child prints it) into a pool.
func certPoolFromBase64(s string) (*x509.CertPool, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bench: decode certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("bench: parse certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool, nil
}

// streamTLSConfig is the TLS configuration of both transport arms, server and client side:
// TLS 1.2 with ECDHE-ECDSA-AES128-GCM-SHA256 (what SQL Server negotiates inside PRELOGIN), and
// one record per Write (no dynamic record sizing).
func streamTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:                  tls.VersionTLS12,
		MaxVersion:                  tls.VersionTLS12,
		CipherSuites:                []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		DynamicRecordSizingDisabled: true,
		ServerName:                  "localhost",
	}
}
