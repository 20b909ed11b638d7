package bridge

import (
	"crypto/tls"
	"net"
)

// Client returns b = New(raw, opts) with opts.Role set to RoleClient and the tls.Conn over it,
// tls.Client(b, TLSConfig(cfg, opts.AllowTLS13 || opts.Direct)). Nothing is read or written: run
// the handshake, then call b.StartPassthrough for full encryption, or b.StartPlaintext after the
// first LOGIN7 packet for login-only (TLS 1.2 at most: leave opts.AllowTLS13 false).
func Client(raw net.Conn, cfg *tls.Config, opts Options) (*Conn, *tls.Conn) {
	opts.Role = RoleClient
	b := New(raw, opts)
	return b, tls.Client(b, TLSConfig(cfg, opts.AllowTLS13 || opts.Direct))
}

// Server is Client for the server side: opts.Role is set to RoleServer and the tls.Conn is
// tls.Server(b, TLSConfig(cfg, opts.AllowTLS13 || opts.Direct)).
func Server(raw net.Conn, cfg *tls.Config, opts Options) (*Conn, *tls.Conn) {
	opts.Role = RoleServer
	b := New(raw, opts)
	return b, tls.Server(b, TLSConfig(cfg, opts.AllowTLS13 || opts.Direct))
}
