package mssqlbridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// clientTLSConfig returns the tls.Config for one connection to host (the name or IP address
// the driver dialed). It is a clone of the connector's base config with:
//   - ServerName set to host unless hostNameInCertificate (or the caller's config) fixed it;
//     crypto/tls sends no SNI for an IP address and checks it against the certificate's IP
//     SANs;
//   - RootCAs set, when the certificate is verified and the caller gave none, to the DSN's
//     certificate file or else to the system roots, waiting for a background load still
//     running (a load error is returned here, naming the file);
//   - with a certificate file and a ServerName containing ':', msdsn's special check (common
//     name equal to ServerName, chain to the system roots with the file as intermediates);
//   - with a serverCertificate file, msdsn's byte comparison: the server's leaf certificate
//     must equal the file's first certificate; no chain or name check;
//   - every verification callback (VerifyPeerCertificate, VerifyConnection: the caller's,
//     msdsn's, or the two above) wrapped so that its error is reported as a
//     *CertificateError (see handshakeError).
func (s *settings) clientTLSConfig(ctx context.Context, host string) (*tls.Config, error) {
	cfg, err := s.verifyingConfig(ctx, host)
	if err != nil {
		return nil, err
	}
	if f := cfg.VerifyPeerCertificate; f != nil {
		cfg.VerifyPeerCertificate = func(raw [][]byte, chains [][]*x509.Certificate) error {
			if err := f(raw, chains); err != nil {
				return &verifyError{err}
			}
			return nil
		}
	}
	if f := cfg.VerifyConnection; f != nil {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if err := f(cs); err != nil {
				return &verifyError{err}
			}
			return nil
		}
	}
	return cfg, nil
}

// verifyError marks an error returned by a verification callback of the tls.Config, so that
// handshakeError reports it as a certificate failure.
type verifyError struct{ err error }

func (e *verifyError) Error() string { return e.err.Error() }
func (e *verifyError) Unwrap() error { return e.err }

// errServerCertificateMismatch is msdsn's word for a serverCertificate that is not the one
// the server presented.
var errServerCertificateMismatch = errors.New("server certificate doesn't match the provided certificate")

// verifyingConfig is clientTLSConfig before the callbacks are wrapped.
func (s *settings) verifyingConfig(ctx context.Context, host string) (*tls.Config, error) {
	cfg := s.tlsBase.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if !s.hostInCert || cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if s.serverCert != nil {
		if _, err := s.serverCert.wait(ctx); err != nil {
			return nil, err
		}
		want := s.serverCert.certs[0].Raw
		cfg.InsecureSkipVerify = true
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], want) {
				return errServerCertificateMismatch
			}
			return nil
		}
		return cfg, nil
	}
	if s.file != nil {
		pool, err := s.file.wait(ctx)
		if err != nil {
			return nil, err
		}
		if !cfg.InsecureSkipVerify && cfg.RootCAs == nil {
			if strings.Contains(cfg.ServerName, ":") {
				roots, err := systemRoots.wait(ctx)
				if err != nil {
					return nil, err
				}
				verifyCommonName(cfg, roots, s.file.certs)
			} else {
				cfg.RootCAs = pool
			}
		}
		return cfg, nil
	}
	if s.system && !cfg.InsecureSkipVerify && cfg.RootCAs == nil {
		roots, err := systemRoots.wait(ctx)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	return cfg, nil
}

// verifyCommonName reproduces msdsn's check for a certificate whose common name contains ':'
// (which the standard host name check cannot match): the common name must equal ServerName and
// the chain must verify against roots, with the file's certificates as intermediates.
func verifyCommonName(cfg *tls.Config, roots *x509.CertPool, fileCerts []*x509.Certificate) {
	inter := x509.NewCertPool()
	for _, c := range fileCerts {
		inter.AddCert(c)
	}
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("mssqlbridge: server sent no certificate")
		}
		leaf := cs.PeerCertificates[0]
		if leaf.Subject.CommonName != cs.ServerName {
			return x509.HostnameError{Certificate: leaf, Host: cs.ServerName}
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}

// allowTLS13 reports whether TLS 1.3 may be negotiated inside PRELOGIN: only when the caller
// asked for it (tlsmin=1.3), and never for login-only encryption (see exchange). SQL Server
// uses TLS 1.3 only with TDS 8.0 (encrypt=strict), so the version is otherwise capped at 1.2,
// as tedious does; go-mssqldb's own TLS does not cap it.
func (s *settings) allowTLS13(cfg *tls.Config) bool {
	return cfg.MinVersion >= tls.VersionTLS13
}
