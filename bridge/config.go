package bridge

import (
	"crypto/tls"
	"fmt"
)

// Role says which side of the connection the bridge is on, and therefore
// which TDS packet types the peer may send during the handshake.
type Role uint8

const (
	// RoleClient: the bridge runs under tls.Client; the peer is a server,
	// whose handshake messages may be PRELOGIN (0x12) or, from servers
	// older than TDS 7.2, tabular result (0x04).
	RoleClient Role = iota
	// RoleServer: the bridge runs under tls.Server; the peer is a client,
	// whose handshake messages must be PRELOGIN (0x12).
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

// Options configure a Conn. The zero value is a client bridge that starts
// with a PRELOGIN-wrapped handshake and a 64 KiB read-ahead buffer.
type Options struct {
	// Role selects the packet types accepted from the peer during the
	// handshake.
	Role Role
	// ReadAheadSize is the size of the read-ahead buffer used in
	// passthrough and plaintext mode. Values below DefaultReadAheadSize
	// (64 KiB), including 0, mean DefaultReadAheadSize. It bounds the
	// memory a connection uses for bytes the layer above has not asked
	// for yet. The buffer comes from a pool shared by the Conns of one
	// size: a Conn holds it only while it has bytes buffered or a Read
	// waits on the socket, so an idle connection holds none. Bytes the
	// peer sent after its last handshake message are served first without
	// changing this size.
	ReadAheadSize int
	// Direct starts the Conn in StatePassthrough: TLS runs directly on the
	// socket with no PRELOGIN wrapping (TDS 8.0 strict encryption), and
	// Client and Server allow TLS 1.3.
	Direct bool
	// AllowTLS13 lets Client and Server negotiate TLS 1.3 inside PRELOGIN
	// (see TLSConfig); New ignores it.
	AllowTLS13 bool
}

// TLSConfig returns a copy of cfg prepared for TLS inside PRELOGIN
// packets: DynamicRecordSizingDisabled is set, so that one Write on the
// tls.Conn of up to 16 KiB makes one record (one TDS packet per record),
// and MaxVersion is capped at TLS 1.2 unless allowTLS13 is true (SQL Server
// uses TLS 1.3 only with TDS 8.0). A MaxVersion the caller set below TLS 1.2
// is kept. A nil cfg is treated as an empty tls.Config. cfg is never
// modified. If cfg.MinVersion is TLS 1.3 and allowTLS13 is false, the
// handshake will fail: the caller asked for two incompatible things.
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
