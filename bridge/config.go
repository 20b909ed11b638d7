package bridge

import (
	"crypto/tls"
	"fmt"
)

// Role says which side of the connection the bridge is on, and so which TDS packet types the
// peer may send during the handshake.
type Role uint8

const (
	// RoleClient: the bridge runs under [tls.Client]; the server's handshake messages may be
	// PRELOGIN (0x12) or, before TDS 7.2, tabular result (0x04).
	RoleClient Role = iota
	// RoleServer: the bridge runs under [tls.Server]; the client's must be PRELOGIN (0x12).
	RoleServer
)

// String returns "client", "server" or "Role(n)".
func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleServer:
		return "server"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Options configure a [Conn]. The zero value is a client bridge that starts in handshake mode
// with a 64 KiB read-ahead buffer.
type Options struct {
	// Role selects the packet types accepted from the peer during the handshake.
	Role Role
	// ReadAheadSize bounds the bytes read from the socket that the layer above has not asked
	// for yet, in passthrough and plaintext; below [DefaultReadAheadSize], 0 included, it is
	// DefaultReadAheadSize. The buffer comes from a pool per size and is held only while bytes
	// are buffered or a Read waits on the socket, so an idle connection holds none.
	ReadAheadSize int
	// Direct starts in [StatePassthrough]: TLS directly on the socket, without PRELOGIN
	// (TDS 8.0 strict encryption); [Client] and [Server] then allow TLS 1.3.
	Direct bool
	// AllowTLS13 lets [Client] and [Server] negotiate TLS 1.3 inside PRELOGIN (see
	// [TLSConfig]); [New] ignores it.
	AllowTLS13 bool
}

// TLSConfig returns a copy of cfg (nil: an empty [tls.Config]; cfg is never modified) for TLS
// inside PRELOGIN: DynamicRecordSizingDisabled is set, so that one tls.Conn Write of up to 16 KiB
// is one record (one TDS packet per record), and MaxVersion is capped at TLS 1.2 unless
// allowTLS13 (SQL Server uses TLS 1.3 only with TDS 8.0); a lower MaxVersion is kept. With
// MinVersion TLS 1.3 and allowTLS13 false the handshake fails.
func TLSConfig(cfg *tls.Config, allowTLS13 bool) *tls.Config {
	var out *tls.Config
	if cfg == nil {
		out = &tls.Config{}
	} else {
		out = cfg.Clone()
	}
	out.DynamicRecordSizingDisabled = true
	if !allowTLS13 && (out.MaxVersion == 0 || out.MaxVersion > tls.VersionTLS12) {
		out.MaxVersion = tls.VersionTLS12
	}
	return out
}
