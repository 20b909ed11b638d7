package tdstest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/loopback"
)

// Server is an embedded TDS server listening on a loopback address.
//
// Its methods may be called from several goroutines. Config must not be changed after Start.
type Server struct {
	// Addr is the listening address, "127.0.0.1:port". Set by NewServer / NewUnstartedServer.
	Addr string
	// Config is the server's configuration. It may be changed between NewUnstartedServer and
	// Start, and not afterwards.
	Config Config

	lb *loopback.Server // the listener, the open client sockets and their goroutines

	// Set by Start, read-only afterwards.
	certs     *certBundle
	serverTLS *tls.Config // base server configuration (certificate, Config's versions and suites)
	strictTLS *tls.Config // serverTLS with ALPN tds/8.0, for TDS 8.0
	caDir     string      // temporary directory holding the CA file
	caFile    string
	logf      func(format string, args ...any)

	mu      sync.Mutex
	started bool
	closed  bool
}

// NewServer returns a started Server for cfg. The caller must Close it.
func NewServer(cfg Config) (*Server, error) {
	s, err := NewUnstartedServer(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		_ = s.lb.Close()
		return nil, err
	}
	return s, nil
}

// NewUnstartedServer returns a Server that listens on Config.Addr (default 127.0.0.1 on a free
// port) but does not accept connections until Start. The caller may adjust s.Config, then must call Start, or Close
// to release the port.
func NewUnstartedServer(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	lb, err := loopback.Listen(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("tdstest: %w", err)
	}
	return &Server{Addr: lb.Addr(), Config: cfg, lb: lb}, nil
}

// Start generates the certificate, writes the CA file and starts accepting connections. It
// returns an error if the Config is invalid or Start was already called.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("tdstest: Start: %w", net.ErrClosed)
	}
	if s.started {
		return errors.New("tdstest: Start called twice")
	}
	if err := s.Config.validate(); err != nil {
		return err
	}
	certs, err := newCertBundle(s.Config.Cert, time.Now())
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tdstest-")
	if err != nil {
		return fmt.Errorf("tdstest: CA file: %w", err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, certs.caPEM(), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("tdstest: CA file: %w", err)
	}
	s.certs, s.caDir, s.caFile = certs, dir, caFile
	s.serverTLS = s.Config.serverTLS(certs.cert)
	s.strictTLS = s.serverTLS.Clone()
	s.strictTLS.NextProtos = []string{alpnTDS8}
	s.logf = s.Config.Logf
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	s.lb.SetLogf(s.logf)
	if err := s.lb.Serve(func(raw net.Conn, id int) { newConn(s, raw, id).serve() }); err != nil {
		_ = os.RemoveAll(dir)
		s.caDir, s.caFile = "", ""
		return fmt.Errorf("tdstest: Start: %w", err)
	}
	s.started = true
	return nil
}

// Close stops the listener, closes every connection and blocks until every goroutine of the
// server has ended; then it removes the CA file. A second Close returns an error matching
// net.ErrClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("tdstest: Close: %w", net.ErrClosed)
	}
	s.closed = true
	s.mu.Unlock()
	err := s.lb.Close()
	if s.caDir != "" {
		if rerr := os.RemoveAll(s.caDir); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("tdstest: Close: %w", err)
	}
	return nil
}

// DSN returns a go-mssqldb URL DSN for the server with the configured user and password, for
// example "sqlserver://sa:pw@127.0.0.1:port?encrypt=true&certificate=/tmp/...". params are
// "key=value" strings appended as query parameters in order (values are escaped); with none the
// DSN has no query.
func (s *Server) DSN(params ...string) string {
	u := url.URL{
		Scheme: "sqlserver",
		User:   url.UserPassword(s.Config.user(), s.Config.password()),
		Host:   s.Addr,
	}
	var q []string
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	u.RawQuery = strings.Join(q, "&")
	return u.String()
}

// Certificate returns the server's leaf certificate (nil before Start, and for
// CertNegativeSerial, which Go cannot parse). Go clients may put it in RootCAs; other TLS
// stacks need CACertificate when it differs (CertLargeChain).
func (s *Server) Certificate() *x509.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certs == nil {
		return nil
	}
	return s.certs.leaf
}

// CACertificate returns the trust anchor of the server's chain: the root for CertLargeChain, a
// CA that did not issue the leaf for CertUnknownCA, the self-signed leaf otherwise (nil before
// Start, and for CertNegativeSerial).
func (s *Server) CACertificate() *x509.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certs == nil {
		return nil
	}
	return s.certs.ca
}

// CAFile returns the path of a PEM file holding CACertificate, for clients configured with a file
// (go-mssqldb's "certificate" DSN parameter, FreeTDS "ca file", tedious, pytds cafile). It exists
// from Start until Close.
func (s *Server) CAFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caFile
}

// CertPool returns a new pool holding CACertificate (nil before Start).
func (s *Server) CertPool() *x509.CertPool {
	ca := s.CACertificate()
	if ca == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AddCert(ca)
	return p
}

// TLSConfig returns a new client tls.Config that trusts the server: RootCAs is CertPool and
// ServerName is "localhost" (the certificate also names 127.0.0.1). It returns nil before Start.
func (s *Server) TLSConfig() *tls.Config {
	p := s.CertPool()
	if p == nil {
		return nil
	}
	return &tls.Config{RootCAs: p, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}
