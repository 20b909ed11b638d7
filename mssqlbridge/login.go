package mssqlbridge

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/login7"
	"github.com/tdsbridge/tdsbridge/tds"
)

// writeLogin handles the driver's LOGIN7 packets in login-only mode: the first LOGIN7 packet
// goes through TLS, then both directions switch to plaintext (MS-TDS 3.2.5.3 encrypts only
// that packet). A LOGIN7 of one packet, the usual case, is sent as it came: all of it inside
// TLS. A LOGIN7 that comes in several packets is collected to its last packet (EOM), and
// nothing of it is sent before then. The driver frames LOGIN7 with its configured packet
// size, so with a small size (down to 512) or long variable fields a secret would lie in a
// later packet and cross in clear; so the message is re-framed with a first packet as large
// as the driver's packet size, never smaller than 4096 bytes, the size every server accepts
// before the packet size is negotiated (MS-TDS 2.2.3.1.3), and never larger than
// tds.MaxPacketSize, the largest a tds.Writer makes. Every secret (see parseLogin7) must then
// lie inside that first packet, and the login must not ask for a token sent after it (see
// checkSecrets); if either fails, the message is refused with ErrSecretOutsideTLS and not one
// byte of it leaves. The collected bytes are cleared once sent or refused. Called with wmu held.
func (c *conn) writeLogin(p []byte) (int, error) {
	h, err := tds.ParseHeader(p)
	if err != nil || h.Type != tds.TypeLogin7 || int(h.Length) != len(p) {
		err := fmt.Errorf("%w: login-only encryption expects the LOGIN7 packet, got % x", ErrUnexpectedWrite, p[:min(len(p), tds.HeaderSize)])
		c.transition(stateFailed, err)
		return 0, err
	}
	if c.login == nil && h.Status&tds.StatusEOM != 0 {
		if err := checkSecrets(p[tds.HeaderSize:], len(p)); err != nil {
			c.transition(stateFailed, err)
			return 0, err
		}
		if err := c.sendLogin(p, nil); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if c.login == nil {
		c.loginHdr = h
	}
	c.login = appendSecret(c.login, p[tds.HeaderSize:])
	if len(c.login) > login7.MaxLen {
		c.clearLogin()
		err := fmt.Errorf("%w: LOGIN7 message longer than %d bytes", ErrUnexpectedWrite, login7.MaxLen)
		c.transition(stateFailed, err)
		return 0, err
	}
	if h.Status&tds.StatusEOM == 0 {
		return len(p), nil // the rest of the message comes in the next Writes
	}
	msg := c.login
	c.login = nil
	defer clear(msg)
	size := min(max(int(c.loginHdr.Length), tds.DefaultPacketSize), tds.MaxPacketSize)
	if err := checkSecrets(msg, size); err != nil {
		c.transition(stateFailed, err)
		return 0, err
	}
	// Re-frame: the first packet through TLS, the others in plaintext after the switch.
	var first []byte
	var rest []byte
	w := tds.NewWriter(packetSink(func(pkt []byte) error {
		if first == nil {
			first = append([]byte(nil), pkt...)
		} else {
			rest = append(rest, pkt...)
		}
		return nil
	}), size)
	w.SetSPID(c.loginHdr.SPID)
	w.BeginMessage(tds.TypeLogin7, c.loginHdr.Status&^tds.StatusEOM)
	_, _ = w.Write(msg) // the sink never fails
	_ = w.EndMessage()
	w.Clear()
	err = c.sendLogin(first, rest)
	clear(first)
	clear(rest)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// checkSecrets returns nil when every secret of the LOGIN7 message msg lies in the first packet
// of packetSize bytes and the login does not ask for a FEDAUTH token sent after LOGIN7 (which
// would travel in plaintext); ErrSecretOutsideTLS saying which when one fails; ErrUnexpectedWrite
// when msg cannot be read as LOGIN7 (its secrets cannot be located).
func checkSecrets(msg []byte, packetSize int) error {
	l, err := parseLogin7(msg)
	if err != nil {
		return fmt.Errorf("%w: login-only encryption: %w", ErrUnexpectedWrite, err)
	}
	if l.laterToken {
		return fmt.Errorf("%w: the login asks for federated authentication in which the server answers with FEDAUTHINFO and the token follows LOGIN7 in a message of its own, which login-only encryption (encrypt=false) would send in plaintext; use encrypt=true",
			ErrSecretOutsideTLS)
	}
	room := packetSize - tds.HeaderSize
	for _, sp := range l.secrets {
		if sp.end <= room {
			continue
		}
		need := "use encrypt=true"
		if sp.end+tds.HeaderSize <= tds.MaxPacketSize {
			need = fmt.Sprintf("set the packet size to at least %d or use encrypt=true", sp.end+tds.HeaderSize)
		}
		return fmt.Errorf("%w: the %v ends at byte %d of the %d-byte LOGIN7 message, but the first packet, the only one inside TLS, carries %d bytes at packet size %d; %s",
			ErrSecretOutsideTLS, sp.field, sp.end, len(msg), room, packetSize, need)
	}
	return nil
}

// sendLogin sends first (one LOGIN7 packet) through TLS, switches both directions to
// plaintext, and sends rest (the following LOGIN7 packets, if any) in plaintext.
func (c *conn) sendLogin(first, rest []byte) error {
	fail := func(err error) error {
		c.transition(stateFailed, err)
		return err
	}
	if _, err := c.tlsConn.Write(first); err != nil {
		return fail(fmt.Errorf("mssqlbridge: send LOGIN7 through TLS: %w", err))
	}
	if err := c.bridge.StartPlaintext(); err != nil {
		return fail(fmt.Errorf("mssqlbridge: switch to plaintext after LOGIN7: %w", err))
	}
	for len(rest) > 0 {
		h, err := tds.ParseHeader(rest)
		if err != nil {
			return fail(fmt.Errorf("mssqlbridge: re-framed LOGIN7: %w", err))
		}
		if _, err := c.plainW.Write(rest[:h.Length]); err != nil {
			return fail(fmt.Errorf("mssqlbridge: send LOGIN7 in plaintext: %w", err))
		}
		rest = rest[h.Length:]
	}
	c.loginOnly = true
	c.transition(statePlain, nil)
	return nil
}

// appendSecret is append for a buffer that holds a secret: when dst must grow, the old array
// is cleared, so that no copy of the secret is left behind for the garbage collector.
func appendSecret(dst, p []byte) []byte {
	if cap(dst)-len(dst) < len(p) {
		grown := make([]byte, len(dst), max(2*cap(dst), len(dst)+len(p)))
		copy(grown, dst)
		clear(dst)
		dst = grown
	}
	return append(dst, p...)
}

// clearLogin clears and drops a LOGIN7 message partly collected by writeLogin. Called with wmu
// held.
func (c *conn) clearLogin() {
	clear(c.login)
	c.login = nil
}

// packetSink is an io.Writer that hands each Write (one packet from a tds.Writer) to a func.
type packetSink func(pkt []byte) error

func (f packetSink) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeStrictLogin writes p through TLS in strict mode until the first LOGIN7 packet is sent.
// That packet, when it asks for TDS 7.4, goes in a copy with the TDS version set to 8.0: the
// driver, whose own encryption the connector disables, would otherwise announce 7.4 where
// go-mssqldb's strict mode announces 8.0. Only the message's first packet holds the version
// (a later one, a Kerberos blob say, is data), and the copy, which holds the obfuscated
// password, is cleared once written. Called with wmu held.
func (c *conn) writeStrictLogin(p []byte) (int, error) {
	const versionAt = tds.HeaderSize + 4 // LOGIN7: u32 Length, then u32 TDSVersion (little-endian)
	if len(p) == 0 || tds.PacketType(p[0]) != tds.TypeLogin7 {
		return c.tlsConn.Write(p)
	}
	c.loginSent = true
	if len(p) < versionAt+4 || [4]byte(p[versionAt:]) != [4]byte{0x04, 0x00, 0x00, 0x74} {
		return c.tlsConn.Write(p)
	}
	patched := append([]byte(nil), p...)
	defer clear(patched)
	copy(patched[versionAt:], []byte{0x00, 0x00, 0x00, 0x08})
	return c.tlsConn.Write(patched)
}
