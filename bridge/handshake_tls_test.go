package bridge

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/tds"
)

// messages parses a recorded handshake stream into PRELOGIN messages and
// returns, per message, the packet lengths; it stops at the first byte
// that is not a PRELOGIN packet header (the start of passthrough).
func messages(t *testing.T, stream []byte) [][]int {
	t.Helper()
	var out [][]int
	var cur []int
	for len(stream) >= tds.HeaderSize && stream[0] == byte(tds.TypePrelogin) {
		h, err := tds.ParseHeader(stream)
		if err != nil {
			t.Fatalf("parse header: %v", err)
		}
		if int(h.Length) > len(stream) {
			t.Fatalf("packet of %d bytes, %d recorded", h.Length, len(stream))
		}
		cur = append(cur, int(h.Length))
		stream = stream[h.Length:]
		if h.Status&tds.StatusEOM != 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("message without EOM: packets %v", cur)
	}
	return out
}

func TestHandshakeTLS(t *testing.T) {
	small, large := pkis(t)
	if n := chainLen(large.server); n <= 4096 {
		t.Fatalf("large chain is %d bytes, want > 4096", n)
	}
	mutual := func(p testPKI) (func(*tls.Config), func(*tls.Config)) {
		return func(c *tls.Config) { c.Certificates = []tls.Certificate{p.client} },
			func(c *tls.Config) { c.ClientAuth = tls.RequireAndVerifyClientCert; c.ClientCAs = p.pool }
	}
	lc, ls := mutual(large)
	tests := []struct {
		name        string
		pc          pairConfig
		wantVersion uint16
		multiPacket bool // both sides sent a message of several packets
	}{
		{name: "tls12", pc: pairConfig{pki: small}, wantVersion: tls.VersionTLS12},
		{name: "tls13", pc: pairConfig{pki: small, tls13: true}, wantVersion: tls.VersionTLS13},
		{name: "tls12-large-chains", pc: pairConfig{pki: large, clientCfg: lc, serverCfg: ls},
			wantVersion: tls.VersionTLS12, multiPacket: true},
		{name: "tls13-large-chains", pc: pairConfig{pki: large, tls13: true, clientCfg: lc, serverCfg: ls},
			wantVersion: tls.VersionTLS13, multiPacket: true},
		{name: "direct-tls13", pc: pairConfig{pki: small, tls13: true, direct: true}, wantVersion: tls.VersionTLS13},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				tt.pc.tr = tr
				// With a session cache the client asks for tickets. A TLS 1.3
				// server that asked for a client certificate sends them after
				// the client's Finished, as raw records at its switch; net.Pipe
				// has no buffer, so that write would wait for a client Read
				// this harness does only after both sides switched.
				cache := tls.NewLRUClientSessionCache(2)
				wantTicket := !(tr.name == "pipe" && tt.wantVersion == tls.VersionTLS13 && tt.pc.serverCfg != nil)
				extra := tt.pc.clientCfg
				tt.pc.clientCfg = func(c *tls.Config) {
					if wantTicket {
						c.ClientSessionCache = cache
					}
					if extra != nil {
						extra(c)
					}
				}
				p := newTLSPair(t, tt.pc)
				// Data both ways after the switch: in TLS 1.3 this fails
				// unless StartPassthrough sent the client's Finished.
				roundTrip(t, p.ctc, p.stc, pattern(50000, 1))
				roundTrip(t, p.stc, p.ctc, pattern(70000, 2))
				// The tickets arrive behind the server's Finished (in the
				// last handshake message, served after the switch) or, with
				// a client certificate, as raw records at the server's switch.
				if _, ok := cache.Get("localhost"); wantTicket && !ok {
					t.Fatal("the client got no session ticket")
				}

				if tt.pc.direct {
					if b := p.craw.logged(); b[0] != 0x16 {
						t.Fatalf("direct: first byte %#x, want a TLS handshake record", b[0])
					}
					return
				}
				cm, sm := messages(t, p.craw.logged()), messages(t, p.sraw.logged())
				if len(cm) < 2 || len(sm) < 1 {
					t.Fatalf("client sent %d messages, server %d", len(cm), len(sm))
				}
				multi := func(ms [][]int) bool {
					for _, m := range ms {
						for _, n := range m {
							if n > tds.DefaultPacketSize {
								t.Fatalf("packet of %d bytes > 4096 in %v", n, ms)
							}
						}
						if len(m) > 1 {
							return true
						}
					}
					return false
				}
				cmulti, smulti := multi(cm), multi(sm)
				if tt.multiPacket && (!cmulti || !smulti) {
					t.Fatalf("multi-packet messages: client %v, server %v; want both (client %v, server %v)", cmulti, smulti, cm, sm)
				}
			})
		}
	}
}

// TestHandshakeResumption covers the TLS 1.2 abbreviated handshake, where
// the client writes its Finished last and never reads before the switch.
func TestHandshakeResumption(t *testing.T) {
	small, _ := pkis(t)
	cache := tls.NewLRUClientSessionCache(4)
	pc := pairConfig{tr: transports[1], pki: small,
		clientCfg: func(c *tls.Config) { c.ClientSessionCache = cache },
		serverCfg: func(c *tls.Config) { c.SetSessionTicketKeys([][32]byte{{1, 2, 3}}) }}
	first := newTLSPair(t, pc)
	roundTrip(t, first.stc, first.ctc, []byte("first")) // the client stores the ticket while reading
	if first.ctc.ConnectionState().DidResume {
		t.Fatal("first connection resumed")
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			pc.tr = tr
			p := newTLSPair(t, pc)
			if !p.ctc.ConnectionState().DidResume {
				t.Fatal("second connection did not resume")
			}
			cm := messages(t, p.craw.logged())
			if len(cm) != 2 {
				t.Fatalf("client sent %d PRELOGIN messages, want 2 (ClientHello; CCS+Finished)", len(cm))
			}
			roundTrip(t, p.ctc, p.stc, pattern(3000, 3))
			roundTrip(t, p.stc, p.ctc, pattern(3000, 4))
		})
	}
}

// TestHandshakePeerCloses: a server that closes in the middle of the
// handshake fails the client's handshake with io.ErrUnexpectedEOF, and the
// bridge keeps that error.
func TestHandshakePeerCloses(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			cb := New(c, Options{Role: RoleClient})
			defer cb.Close()
			go func() {
				// Read the ClientHello message, then close without answering.
				r := tds.NewReader(s, tds.ReaderConfig{})
				_, _, _ = r.ReadMessage()
				s.Close()
			}()
			pc := pairConfig{pki: small}
			ccfg, _ := pc.configs()
			err := tls.Client(cb, ccfg).Handshake()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("handshake error %v, want io.ErrUnexpectedEOF", err)
			}
			if cb.State() != StateFailed {
				t.Fatalf("state %v, want failed", cb.State())
			}
			_, rerr := cb.Read(make([]byte, 1))
			_, werr := cb.Write([]byte("x"))
			for _, e := range []error{rerr, werr, cb.StartPassthrough()} {
				if !errors.Is(e, io.ErrUnexpectedEOF) || !bytes.Contains([]byte(e.Error()), []byte("bridge: handshake: read PRELOGIN reply")) {
					t.Fatalf("later call returned %v, want the sticky handshake error", e)
				}
			}
		})
	}
}

// TestHandshakeAlertReachesPeer: when one side's TLS layer refuses the handshake, the alert it
// sends goes out at once, inside a PRELOGIN message, and the other side reports what it was
// told ("remote error: tls: ...") instead of a closed connection: a client that does not trust
// the server's certificate (in TLS 1.2 and 1.3), and a server that requires a TLS version the
// client lacks.
func TestHandshakeAlertReachesPeer(t *testing.T) {
	small, _ := pkis(t)
	for _, tc := range []struct {
		name      string
		pc        pairConfig
		wantAlert string // in the error of the side that did not refuse
	}{
		{"client refuses the certificate", pairConfig{pki: small, clientCfg: func(c *tls.Config) { c.RootCAs = x509.NewCertPool() }},
			"server: remote error: tls: bad certificate"},
		// In TLS 1.3 the client's alert is encrypted (its record typed as application data):
		// it reaches the server through SendPending.
		{"client refuses the certificate, TLS 1.3", pairConfig{pki: small, tls13: true, clientCfg: func(c *tls.Config) { c.RootCAs = x509.NewCertPool() }},
			"server: remote error: tls: bad certificate"},
		{"server refuses the version", pairConfig{pki: small, serverCfg: func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }},
			"client: remote error: tls: protocol version not supported"},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				tc.pc.tr = tr
				_, err := dialTLSPair(t, tc.pc)
				if err == nil || !strings.Contains(err.Error(), tc.wantAlert) {
					t.Fatalf("got %v, want %q", err, tc.wantAlert)
				}
			})
		}
	}
}

// TestHasAlert: an alert is found behind records of every length a handshake flight holds
// (the length's low byte takes every value), and not where there is none.
func TestHasAlert(t *testing.T) {
	alert := record(recordTypeAlert, 2, 1)
	for _, n := range []int{0, 1, 2, 4, 5, 37, 255, 256, 257, 261, 1000, 4096, 16384} {
		for _, typ := range []byte{0x14, 0x16, 0x17} {
			before := record(typ, n, 2)
			if !hasAlert(append(bytes.Clone(before), alert...)) {
				t.Errorf("alert behind a %d-byte record of type %#x not found", n, typ)
			}
			if hasAlert(append(bytes.Clone(before), record(typ, n, 3)...)) {
				t.Errorf("alert found in two %d-byte records of type %#x", n, typ)
			}
		}
	}
	if hasAlert(alert[:4]) {
		t.Error("alert found in a header cut short")
	}
}
