package mssqlbridge

import (
	"crypto/tls"
	"log/slog"

	mssql "github.com/microsoft/go-mssqldb"
)

// Option configures NewConnector and NewConnectorConfig.
type Option func(*options)

type options struct {
	tlsConfig      *tls.Config
	dialer         mssql.Dialer
	rsaKeyExchange bool // WithRSAKeyExchange
	logger         *slog.Logger
}

// collectOptions applies opts, in order, to a zero options value.
func collectOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithTLSConfig makes connections use a clone of cfg in place of the TLS settings derived from
// the DSN (TrustServerCertificate, hostNameInCertificate, certificate, serverCertificate,
// tlsmin); the DSN's certificate files are then not even read. The DSN still decides whether
// and how to encrypt (encrypt=...). cfg is never modified. An error from its
// VerifyPeerCertificate or VerifyConnection is reported as a *CertificateError. Per connection:
// ServerName, if empty, becomes the host dialed; RootCAs, if nil while the certificate is
// verified, becomes the system roots (loaded in the background from NewConnector on); the
// TLS version is capped at 1.2 inside PRELOGIN unless MinVersion is TLS 1.3; strict mode sets
// NextProtos to "tds/8.0". A nil cfg leaves the DSN's settings in place.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(o *options) { o.tlsConfig = cfg }
}

// WithDialer makes connections open their TCP connection with d (for example to go through a
// proxy) instead of a net.Dialer. d receives "host:port" with the host name unresolved, as a
// go-mssqldb HostDialer would, and SQL Server Browser (UDP) lookups as well. The conn
// returned by d is owned by the connection from then on.
func WithDialer(d mssql.Dialer) Option {
	return func(o *options) { o.dialer = d }
}
