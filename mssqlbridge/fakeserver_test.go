package mssqlbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/loopback"
	"github.com/tdsbridge/tdsbridge/internal/testcert"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// testPKI is a CA and a server certificate for "localhost", "server.test" and 127.0.0.1.
type testPKI struct {
	caCert *x509.Certificate
	caPEM  []byte
	leaf   tls.Certificate
	pool   *x509.CertPool
	caFile string // caPEM written to a .pem file
	caDER  string // the CA as a .der file
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	ca, err := testcert.NewCA("mssqlbridge test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(testcert.LeafOptions{DNSNames: []string{"localhost", "server.test"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &testPKI{
		caCert: ca.Root,
		caPEM:  ca.PEM(),
		leaf:   leaf,
		pool:   ca.Pool(),
		caFile: filepath.Join(dir, "ca.pem"),
		caDER:  filepath.Join(dir, "ca.der"),
	}
	if err := os.WriteFile(p.caFile, p.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.caDER, ca.Root.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// event is one packet the fake server received: its type and whether it came inside TLS.
type event struct {
	Type tds.PacketType
	TLS  bool
}

// fakeServer is a minimal TDS endpoint for transport tests: it answers PRELOGIN per the
// negotiation table (prelogin.ServerReply), runs TLS through a server bridge, and then echoes
// every packet back as a tabular-result packet with the same body, recording what it received
// and whether it was encrypted. strict: TLS first (TDS 8.0).
type fakeServer struct {
	t       testing.TB
	lb      *loopback.Server
	setting prelogin.Encryption
	strict  bool
	pki     *testPKI

	mu      sync.Mutex
	events  []event
	sent    []prelogin.Encryption // ENCRYPTION values clients sent
	errs    []error
	version []uint16 // TLS versions negotiated
	sni     []string // server names clients sent (SNI)
	unique  [][]byte // tls-unique of each TLS connection (RFC 5929)
}

func newFakeServer(t testing.TB, pki *testPKI, setting prelogin.Encryption, strict bool) *fakeServer {
	t.Helper()
	lb, err := loopback.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, lb: lb, setting: setting, strict: strict, pki: pki}
	if err := lb.Serve(func(c net.Conn, _ int) {
		if err := s.serve(c); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.lb.Addr() }

func (s *fakeServer) close() { _ = s.lb.Close() }

func (s *fakeServer) record(e event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *fakeServer) snapshot() ([]event, []prelogin.Encryption, []uint16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]event(nil), s.events...), append([]prelogin.Encryption(nil), s.sent...), append([]uint16(nil), s.version...)
}

func (s *fakeServer) tlsConfig(strict bool) *tls.Config {
	cfg := &tls.Config{
		Certificates: []tls.Certificate{s.pki.leaf},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			s.mu.Lock()
			s.sni = append(s.sni, h.ServerName)
			s.mu.Unlock()
			return nil, nil
		},
	}
	if strict {
		cfg.NextProtos = []string{"tds/8.0"}
		return cfg
	}
	return bridge.TLSConfig(cfg, false)
}

// serverReplyPayload is the SQL Server 2008 PRELOGIN reply from docs/protocol.md, section "PRELOGIN".
func serverReplyPayload(enc prelogin.Encryption) []byte {
	p := []byte{
		0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION at 26, length 6
		0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION at 32, length 1
		0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT at 33, length 1
		0x03, 0x00, 0x22, 0x00, 0x00, // THREADID at 34, length 0
		0x04, 0x00, 0x22, 0x00, 0x01, // MARS at 34, length 1
		0xFF,                               // terminator
		0x0A, 0x00, 0x0F, 0xA0, 0x00, 0x00, // version 10.0.4000.0
		0x00, // ENCRYPTION (set below)
		0x00, // INSTOPT
		0x00, // MARS
	}
	p[32] = byte(enc)
	return p
}

func (s *fakeServer) serve(raw net.Conn) error {
	if s.strict {
		b := bridge.New(raw, bridge.Options{Role: bridge.RoleServer, Direct: true})
		ts := tls.Server(b, s.tlsConfig(true))
		if err := ts.Handshake(); err != nil {
			return err
		}
		s.noteVersion(ts)
		rd := tds.NewReader(ts, tds.ReaderConfig{})
		_, payload, err := rd.ReadMessage()
		if err != nil {
			return err
		}
		s.noteSent(payload)
		if err := tds.NewWriter(ts, tds.DefaultPacketSize).WriteMessage(tds.TypeTabularResult, serverReplyPayload(prelogin.EncryptOn)); err != nil {
			return err
		}
		return s.echo(rd, ts, true)
	}
	rd := tds.NewReader(raw, tds.ReaderConfig{})
	_, payload, err := rd.ReadMessage()
	if err != nil {
		return err
	}
	client := s.noteSent(payload)
	reply, mode, closeAfter := prelogin.ServerReply(s.setting, client)
	if err := tds.NewWriter(raw, tds.DefaultPacketSize).WriteMessage(tds.TypeTabularResult, serverReplyPayload(reply)); err != nil {
		return err
	}
	if closeAfter {
		return nil
	}
	if mode == prelogin.ModeNone {
		return s.echo(rd, raw, false)
	}
	b := bridge.New(raw, bridge.Options{Role: bridge.RoleServer})
	ts := tls.Server(b, s.tlsConfig(false))
	if err := ts.Handshake(); err != nil {
		return err
	}
	if err := b.StartPassthrough(); err != nil {
		return err
	}
	s.noteVersion(ts)
	// Packets as large as the client's packet size (a login-only LOGIN7 packet may exceed 4096).
	trd := tds.NewReader(ts, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize})
	if mode == prelogin.ModeFull {
		return s.echo(trd, ts, true)
	}
	// Login-only: the first packet (LOGIN7) inside TLS, then plaintext both ways.
	h, body, err := trd.ReadPacket()
	if err != nil {
		return err
	}
	s.record(event{h.Type, true})
	if err := b.StartPlaintext(); err != nil {
		return err
	}
	if err := writeEcho(b, body); err != nil {
		return err
	}
	return s.echo(tds.NewReader(b, tds.ReaderConfig{}), b, false)
}

func (s *fakeServer) noteSent(payload []byte) prelogin.Encryption {
	e, err := prelogin.EncryptionOf(payload)
	if err != nil {
		e = 0xFF
	}
	s.mu.Lock()
	s.sent = append(s.sent, e)
	s.mu.Unlock()
	return e
}

func (s *fakeServer) noteVersion(ts *tls.Conn) {
	s.mu.Lock()
	s.version = append(s.version, ts.ConnectionState().Version)
	s.unique = append(s.unique, ts.ConnectionState().TLSUnique)
	s.mu.Unlock()
}

// echo answers every packet with a tabular-result packet carrying the same body.
func (s *fakeServer) echo(rd *tds.Reader, w io.Writer, overTLS bool) error {
	rd.SetMaxPacketSize(tds.MaxPacketSize)
	for {
		h, body, err := rd.ReadPacket()
		if err != nil {
			return err
		}
		s.record(event{h.Type, overTLS})
		if err := writeEcho(w, body); err != nil {
			return err
		}
	}
}

func writeEcho(w io.Writer, body []byte) error {
	h := tds.Header{Type: tds.TypeTabularResult, Status: tds.StatusEOM, Length: uint16(tds.HeaderSize + len(body)), PacketID: 1}
	_, err := w.Write(append(h.Append(nil), body...))
	return err
}

// exchangePrelogin writes clientPrelogin on c and reads the server's reply.
func exchangePrelogin(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := c.Write(clientPrelogin()); err != nil {
		t.Fatalf("PRELOGIN: %v", err)
	}
	if _, _, err := tds.NewReader(c, tds.ReaderConfig{}).ReadMessage(); err != nil {
		t.Fatalf("PRELOGIN reply: %v", err)
	}
}

// clientPrelogin is the client PRELOGIN packet from the specification's example (MS-TDS 4.1).
func clientPrelogin() []byte {
	return []byte{
		0x12, 0x01, 0x00, 0x2F, 0x00, 0x00, 0x01, 0x00, // header: PRELOGIN, EOM, length 47
		0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION at 26, length 6
		0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION at 32, length 1
		0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT at 33, length 1
		0x03, 0x00, 0x22, 0x00, 0x04, // THREADID at 34, length 4
		0x04, 0x00, 0x26, 0x00, 0x01, // MARS at 38, length 1
		0xFF,                               // terminator
		0x09, 0x00, 0x00, 0x00, 0x00, 0x00, // version
		0x02,                   // ENCRYPTION: NOT_SUP, as the driver with encryption disabled sends
		0x00,                   // INSTOPT
		0xB8, 0x0D, 0x00, 0x00, // THREADID
		0x01, // MARS
	}
}

// packet returns one whole packet of type typ with body.
func packet(typ tds.PacketType, body []byte) []byte {
	h := tds.Header{Type: typ, Status: tds.StatusEOM, Length: uint16(tds.HeaderSize + len(body)), PacketID: 1}
	return append(h.Append(nil), body...)
}
