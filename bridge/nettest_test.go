package bridge

import (
	"net"
	"testing"

	"golang.org/x/net/nettest"
)

// TestNetConn runs the net.Conn conformance suite against two bridges on
// loopback TCP after a real TLS handshake over PRELOGIN, in passthrough
// and in plaintext mode. (A tls.Conn on top would not pass: crypto/tls
// makes a write timeout permanent.)
func TestNetConn(t *testing.T) {
	small, _ := pkis(t)
	mp := func(mode State) nettest.MakePipe {
		return func() (net.Conn, net.Conn, func(), error) {
			p, err := dialTLSPair(t, pairConfig{tr: transports[1], pki: small})
			if err != nil {
				return nil, nil, nil, err
			}
			stop := func() { p.cb.Close(); p.sb.Close() }
			if mode == StatePlaintext {
				if err := p.cb.StartPlaintext(); err != nil {
					stop()
					return nil, nil, nil, err
				}
				if err := p.sb.StartPlaintext(); err != nil {
					stop()
					return nil, nil, nil, err
				}
			}
			return p.cb, p.sb, stop, nil
		}
	}
	t.Run("passthrough", func(t *testing.T) { nettest.TestConn(t, mp(StatePassthrough)) })
	t.Run("plaintext", func(t *testing.T) { nettest.TestConn(t, mp(StatePlaintext)) })
}
