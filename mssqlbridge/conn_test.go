package mssqlbridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// testSettings returns connector settings for encryption enc, verifying against pki's CA.
func testSettings(t testing.TB, pki *testPKI, enc msdsn.Encryption) *settings {
	t.Helper()
	cfg := msdsn.Config{Encryption: enc, Host: "localhost"}
	if enc != msdsn.EncryptionDisabled {
		cfg.TLSConfig = &tls.Config{RootCAs: pki.pool}
	}
	s, err := newSettings(cfg, dsnFiles{}, options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dialTest dials the fake server through the bridged dialer, as go-mssqldb would.
func dialTest(t testing.TB, s *settings, addr string) (*conn, error) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := (&dialer{s: s}).DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
	if err != nil {
		return nil, err
	}
	c := nc.(*conn)
	c.dialCtx = nil // the test's context ends here; negotiation runs unbounded
	return c, nil
}

// roundTrip writes a packet and reads the echo.
func roundTrip(t testing.TB, c net.Conn, typ tds.PacketType, body []byte) {
	t.Helper()
	if _, err := c.Write(packet(typ, body)); err != nil {
		t.Fatalf("write %v: %v", typ, err)
	}
	h, got, err := tds.NewReader(c, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize}).ReadPacket()
	if err != nil {
		t.Fatalf("read echo of %v: %v", typ, err)
	}
	if h.Type != tds.TypeTabularResult || !bytes.Equal(got, body) {
		t.Fatalf("echo of %v: got %v with %d bytes, want %d bytes", typ, h, len(got), len(body))
	}
}

// TestNegotiationCells runs every client setting against every server setting of the
// negotiation table (docs/protocol.md, section "PRELOGIN"), and against a strict (TDS 8.0)
// server, at the transport level and checks the outcome: the mode the conn settled, which
// packets the server received inside TLS, the ENCRYPTION value it received, and the refusals.
func TestNegotiationCells(t *testing.T) {
	pki := newTestPKI(t)
	// errAny: the cell fails, with an error that depends on how the server's TLS (or TDS)
	// stack reads the other protocol's first bytes.
	errAny := errors.New("any error")
	type want struct {
		err     error
		dialErr bool // strict: the TLS handshake on dial fails
		sent    prelogin.Encryption
		mode    prelogin.Mode
		login   bool // LOGIN7 inside TLS
		batch   bool // SQL batch inside TLS
		version uint16
	}
	none, loginOnly, full, strict := prelogin.ModeNone, prelogin.ModeLoginOnly, prelogin.ModeFull, prelogin.ModeStrict
	cases := []struct {
		name   string
		client msdsn.Encryption
		server prelogin.Encryption
		strict bool
		want   want
	}{
		{"disable/OFF", msdsn.EncryptionDisabled, prelogin.EncryptOff, false, want{sent: prelogin.EncryptNotSup, mode: none}},
		{"disable/ON", msdsn.EncryptionDisabled, prelogin.EncryptOn, false, want{err: ErrServerRequiresEncryption, sent: prelogin.EncryptNotSup}},
		{"disable/NOT_SUP", msdsn.EncryptionDisabled, prelogin.EncryptNotSup, false, want{sent: prelogin.EncryptNotSup, mode: none}},
		{"disable/strict", msdsn.EncryptionDisabled, prelogin.EncryptOn, true, want{err: errAny}},
		{"false/OFF", msdsn.EncryptionOff, prelogin.EncryptOff, false, want{sent: prelogin.EncryptOff, mode: loginOnly, login: true, version: tls.VersionTLS12}},
		{"false/ON", msdsn.EncryptionOff, prelogin.EncryptOn, false, want{sent: prelogin.EncryptOff, mode: full, login: true, batch: true, version: tls.VersionTLS12}},
		{"false/NOT_SUP", msdsn.EncryptionOff, prelogin.EncryptNotSup, false, want{sent: prelogin.EncryptOff, mode: none}},
		{"false/strict", msdsn.EncryptionOff, prelogin.EncryptOn, true, want{err: errAny}},
		{"true/OFF", msdsn.EncryptionRequired, prelogin.EncryptOff, false, want{sent: prelogin.EncryptOn, mode: full, login: true, batch: true, version: tls.VersionTLS12}},
		{"true/ON", msdsn.EncryptionRequired, prelogin.EncryptOn, false, want{sent: prelogin.EncryptOn, mode: full, login: true, batch: true, version: tls.VersionTLS12}},
		{"true/NOT_SUP", msdsn.EncryptionRequired, prelogin.EncryptNotSup, false, want{err: ErrServerNoEncryption, sent: prelogin.EncryptOn}},
		{"true/strict", msdsn.EncryptionRequired, prelogin.EncryptOn, true, want{err: errAny}},
		{"strict/OFF", msdsn.EncryptionStrict, prelogin.EncryptOff, false, want{dialErr: true}},
		{"strict/ON", msdsn.EncryptionStrict, prelogin.EncryptOn, false, want{dialErr: true}},
		{"strict/NOT_SUP", msdsn.EncryptionStrict, prelogin.EncryptNotSup, false, want{dialErr: true}},
		{"strict/strict", msdsn.EncryptionStrict, prelogin.EncryptOn, true, want{sent: prelogin.EncryptStrict, mode: strict, login: true, batch: true, version: tls.VersionTLS13}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, pki, tc.server, tc.strict)
			c, err := dialTest(t, testSettings(t, pki, tc.client), srv.addr())
			if tc.want.dialErr {
				if err == nil {
					c.Close()
					t.Fatal("dial succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Write(clientPrelogin())
			if tc.want.err == errAny {
				if err == nil || c.state() != stateFailed {
					t.Fatalf("PRELOGIN write: got %v in state %v, want an error and %v", err, c.state(), stateFailed)
				}
				return
			}
			if tc.want.err != nil {
				if !errors.Is(err, tc.want.err) {
					t.Fatalf("PRELOGIN write: got %v, want %v", err, tc.want.err)
				}
				// Sticky: nothing more is written, reads fail the same way.
				if _, err2 := c.Write(packet(tds.TypeLogin7, []byte("login"))); !errors.Is(err2, tc.want.err) {
					t.Fatalf("write after refusal: got %v, want %v", err2, tc.want.err)
				}
				if _, err2 := c.Read(make([]byte, 8)); !errors.Is(err2, tc.want.err) {
					t.Fatalf("read after refusal: got %v, want %v", err2, tc.want.err)
				}
				c.Close()
				srv.close()
				events, sent, _ := srv.snapshot()
				if len(events) != 0 {
					t.Fatalf("server received %v after the refusal", events)
				}
				if len(sent) != 1 || sent[0] != tc.want.sent {
					t.Fatalf("server saw ENCRYPTION %v, want %v", sent, tc.want.sent)
				}
				return
			}
			if err != nil {
				t.Fatalf("PRELOGIN write: %v", err)
			}
			if c.mode != tc.want.mode {
				t.Fatalf("mode %v, want %v", c.mode, tc.want.mode)
			}
			typ, payload, err := tds.NewReader(c, tds.ReaderConfig{}).ReadMessage()
			if err != nil {
				t.Fatalf("read PRELOGIN reply: %v", err)
			}
			if enc, err := prelogin.EncryptionOf(payload); typ != tds.TypeTabularResult || err != nil || enc != prelogin.EncryptNotSup {
				t.Fatalf("driver's reply: type %v, ENCRYPTION %v (%v); want tabular result, NOT_SUP", typ, enc, err)
			}
			roundTrip(t, c, tds.TypeLogin7, buildLogin7(testLogin7{version: 0x72090002, user: "sa", password: secret("pw", 20)})) // TDS 7.2: strict mode patches only 7.4
			roundTrip(t, c, tds.TypeSQLBatch, bytes.Repeat([]byte("q"), 5000))
			roundTrip(t, c, tds.TypeSQLBatch, []byte("again"))
			c.Close()
			srv.close()
			events, sent, versions := srv.snapshot()
			wantEvents := []event{{tds.TypeLogin7, tc.want.login}, {tds.TypeSQLBatch, tc.want.batch}, {tds.TypeSQLBatch, tc.want.batch}}
			if len(events) != 3 || events[0] != wantEvents[0] || events[1] != wantEvents[1] || events[2] != wantEvents[2] {
				t.Fatalf("server received %v, want %v", events, wantEvents)
			}
			if len(sent) != 1 || sent[0] != tc.want.sent {
				t.Fatalf("server saw ENCRYPTION %v, want %v", sent, tc.want.sent)
			}
			if tc.want.version != 0 && (len(versions) != 1 || versions[0] != tc.want.version) {
				t.Fatalf("TLS versions %x, want %x", versions, tc.want.version)
			}
		})
	}
}

// TestEveryModeAndState: every prelogin.Mode has a state to enter and every state a name and
// a row of transitions; a mode or a state without its cases fails the call with an error,
// never a panic, and writes nothing.
func TestEveryModeAndState(t *testing.T) {
	for m := prelogin.Mode(0); m.Valid(); m++ {
		if s, err := stateFor(m); err != nil || s == stateFailed {
			t.Errorf("stateFor(%v) = %v, %v", m, s, err)
		}
	}
	if _, err := stateFor(prelogin.Mode(len(stateNames))); err == nil {
		t.Error("stateFor(an unknown mode) succeeded")
	}
	if len(transitions) != len(stateNames) {
		t.Errorf("%d rows of transitions for %d states", len(transitions), len(stateNames))
	}
	for s := range state(len(stateNames)) {
		if stateNames[s] == "" {
			t.Errorf("state %d has no name", s)
		}
	}
	unknown := state(len(stateNames))
	c := &conn{} // no writer at all: a write that reached one would panic
	for _, s := range []state{stateNew, stateFailed, stateClosed, unknown} {
		if _, err := c.writeIn(s, packet(tds.TypeSQLBatch, []byte("q"))); err == nil {
			t.Errorf("writeIn in %v succeeded", s)
		}
	}
	if err := c.stickyErr(unknown); err == nil {
		t.Errorf("stickyErr(%v) = nil", unknown)
	}
}

// TestStrictLoginVersion: in strict mode the first LOGIN7 packet's TDS version 7.4 becomes
// 8.0, as go-mssqldb's own strict mode sends it; the driver's buffer is not modified, and
// other packets pass unchanged: a later packet of the same LOGIN7 message (a Kerberos blob,
// say) whose body happens to hold 7.4's bytes where the version sits in the first, and every
// packet after the login.
func TestStrictLoginVersion(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOn, true)
	c, err := dialTest(t, testSettings(t, pki, msdsn.EncryptionStrict), srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(clientPrelogin()); err != nil {
		t.Fatal(err)
	}
	rd := tds.NewReader(c, tds.ReaderConfig{})
	if _, _, err := rd.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	login := packet(tds.TypeLogin7, []byte{
		0x40, 0x00, 0x00, 0x00, // Length
		0x04, 0x00, 0x00, 0x74, // TDSVersion 7.4, little-endian
		0x00, 0x10, 0x00, 0x00, // PacketSize
	})
	login[1] = 0 // not EOM: the message goes on
	sent := bytes.Clone(login)
	later := []byte{0x40, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x74}
	for _, p := range [][]byte{login, packet(tds.TypeLogin7, later)} {
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(login, sent) {
		t.Fatal("Write modified the caller's buffer")
	}
	rd.SetMaxPacketSize(tds.MaxPacketSize)
	_, body, err := rd.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x00, 0x00, 0x00, 0x08}; !bytes.Equal(body[4:8], want) {
		t.Fatalf("TDS version sent: % x, want % x", body[4:8], want)
	}
	if _, body, err = rd.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, later) {
		t.Fatalf("the LOGIN7 message's second packet arrived as % x, want % x (unpatched)", body, later)
	}
	roundTrip(t, c, tds.TypeSQLBatch, []byte{0x04, 0x00, 0x00, 0x74, 0x04, 0x00, 0x00, 0x74})
}

// TestServerName: the certificate is checked against the host the driver dialed, sent as SNI
// for a name and not at all for an IP address; hostNameInCertificate replaces it.
func TestServerName(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOn, false)
	_, port, _ := net.SplitHostPort(srv.addr())
	for _, tc := range []struct {
		host, hostInCert, wantSNI string
	}{
		{"localhost", "", "localhost"},
		{"127.0.0.1", "", ""},
		{"127.0.0.1", "server.test", "server.test"},
	} {
		cfg := &tls.Config{RootCAs: pki.pool, ServerName: tc.hostInCert}
		s, err := newSettings(msdsn.Config{Encryption: msdsn.EncryptionRequired, TLSConfig: cfg, HostInCertificateProvided: tc.hostInCert != ""}, dsnFiles{}, options{})
		if err != nil {
			t.Fatal(err)
		}
		nc, err := (&dialer{s: s}).DialContext(context.Background(), "tcp", net.JoinHostPort(tc.host, port))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(clientPrelogin()); err != nil {
			t.Fatalf("%s: %v", tc.host, err)
		}
		_ = nc.Close()
		srv.mu.Lock()
		got := srv.sni[len(srv.sni)-1]
		srv.mu.Unlock()
		if got != tc.wantSNI {
			t.Errorf("dialing %s (hostNameInCertificate %q): SNI %q, want %q", tc.host, tc.hostInCert, got, tc.wantSNI)
		}
	}
}
