package tdstest

import (
	"crypto/tls"
	"encoding/binary"
	"math/rand"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// sendRaw writes b on a fresh connection, closes the client's sending side and waits until the
// server closes the connection.
func sendRaw(t *testing.T, s *Server, b []byte) {
	t.Helper()
	c := dialRaw(t, s)
	if _, err := c.raw.Write(b); err != nil {
		t.Fatal(err)
	}
	// End the client's side so that a server waiting for the rest of a message sees EOF.
	_ = c.raw.(*net.TCPConn).CloseWrite()
	c.expectClosed()
}

func packet(typ tds.PacketType, status tds.Status, payload []byte) []byte {
	h := tds.Header{Type: typ, Status: status, Length: uint16(tds.HeaderSize + len(payload)), PacketID: 1}
	return append(h.Append(nil), payload...)
}

// TestBadInputBeforeLogin: malformed input closes the connection with a log line, never a panic.
func TestBadInputBeforeLogin(t *testing.T) {
	validPrelogin := func(enc prelogin.Encryption) []byte {
		var m prelogin.Message
		m.Version, m.HasVersion = prelogin.Version{Major: 1}, true
		m.Encryption, m.HasEncryption = enc, true
		b, err := m.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	short := packet(tds.TypePrelogin, tds.StatusEOM, validPrelogin(prelogin.EncryptOn))
	binary.BigEndian.PutUint16(short[2:], 4)
	huge := packet(tds.TypePrelogin, tds.StatusEOM, nil)
	binary.BigEndian.PutUint16(huge[2:], 5000)
	noEnc := func() []byte {
		var m prelogin.Message
		m.Version, m.HasVersion = prelogin.Version{Major: 1}, true
		b, _ := m.Encode(nil)
		return packet(tds.TypePrelogin, tds.StatusEOM, b)
	}()
	tests := []struct {
		name    string
		cfg     Config
		input   []byte
		wantLog string
	}{
		{"HTTP request", Config{}, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "client starts with byte 0x47"},
		{"length shorter than header", Config{}, short, "read PRELOGIN"},
		{"packet larger than 4096", Config{}, huge, "read PRELOGIN"},
		{"garbage PRELOGIN payload", Config{}, packet(tds.TypePrelogin, tds.StatusEOM, []byte{0x00, 0x00, 0xFF, 0xFF, 0x01}), "decode PRELOGIN"},
		{"PRELOGIN without ENCRYPTION", Config{}, noEnc, "no ENCRYPTION option"},
		{"truncated packet", Config{}, packet(tds.TypePrelogin, tds.StatusEOM, validPrelogin(prelogin.EncryptOn))[:12], "read PRELOGIN"},
		{"PRELOGIN to a strict server", Config{Encryption: EncryptStrict}, packet(tds.TypePrelogin, tds.StatusEOM, validPrelogin(prelogin.EncryptOn)), "not a TLS ClientHello"},
		{"TLS to a NOT_SUP server", Config{Encryption: EncryptNotSup}, []byte{0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5}, "NOT_SUP"},
		{"LOGIN7 before PRELOGIN, server ON", Config{}, packet(tds.TypeLogin7, tds.StatusEOM, encodeLogin7(goodLogin7())), "LOGIN7 without PRELOGIN refused"},
		{"LOGIN7 before PRELOGIN, strict server", Config{Encryption: EncryptStrict}, packet(tds.TypeLogin7, tds.StatusEOM, encodeLogin7(goodLogin7())), "client starts with byte 0x10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, log := startServer(t, tc.cfg)
			sendRaw(t, s, tc.input)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, log)
			}
			if strings.Contains(log.String(), "panic") {
				t.Errorf("panic logged:\n%s", log)
			}
		})
	}
}

// TestNegotiationCloses: where the negotiation table says so, the server replies and closes.
func TestNegotiationCloses(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		client  prelogin.Encryption
		reply   prelogin.Encryption
		closeIt bool
	}{
		{"client NOT_SUP, server ON", Config{}, prelogin.EncryptNotSup, prelogin.EncryptReq, true},
		{"client ON, server NOT_SUP", Config{Encryption: EncryptNotSup}, prelogin.EncryptOn, prelogin.EncryptNotSup, true},
		{"client REQ, server NOT_SUP", Config{Encryption: EncryptNotSup}, prelogin.EncryptReq, prelogin.EncryptNotSup, true},
		{"client OFF, server ON", Config{}, prelogin.EncryptOff, prelogin.EncryptReq, false},
		{"client OFF, server OFF", Config{Encryption: EncryptOff}, prelogin.EncryptOff, prelogin.EncryptOff, false},
		{"client ON, server OFF", Config{Encryption: EncryptOff}, prelogin.EncryptOn, prelogin.EncryptOn, false},
		{"client NOT_SUP, server OFF", Config{Encryption: EncryptOff}, prelogin.EncryptNotSup, prelogin.EncryptNotSup, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startServer(t, tc.cfg)
			c := dialRaw(t, s)
			reply, _ := c.prelogin(tc.client)
			if reply != tc.reply {
				t.Fatalf("reply %v, want %v", reply, tc.reply)
			}
			if tc.closeIt {
				c.expectClosed()
			}
		})
	}
}

// TestBadInputAfterLogin: garbage in the request phase (plaintext, so the bytes reach the TDS
// layer as they are) is logged and closes the connection; the server survives.
func TestBadInputAfterLogin(t *testing.T) {
	badBatch := packet(tds.TypeSQLBatch, tds.StatusEOM, []byte{0xFF, 0xFF, 0x00, 0x00, 'x', 0})
	oddBatch := packet(tds.TypeSQLBatch, tds.StatusEOM, append(binary.LittleEndian.AppendUint32(nil, 4), 'x'))
	tests := map[string][]byte{
		"bad ALL_HEADERS":    badBatch,
		"odd text":           oddBatch,
		"LOGIN7 again":       packet(tds.TypeLogin7, tds.StatusEOM, encodeLogin7(goodLogin7())),
		"PRELOGIN again":     packet(tds.TypePrelogin, tds.StatusEOM, []byte{0xFF}),
		"type change":        append(packet(tds.TypeSQLBatch, 0, []byte{1, 2}), packet(tds.TypeRPC, tds.StatusEOM, nil)...),
		"short header field": {0x01, 0x01, 0x00, 0x02, 0, 0, 0, 0},
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		b := make([]byte, 1+rng.Intn(300))
		rng.Read(b)
		tests["random "+string(rune('a'+i))] = b
	}
	s, log := startServer(t, Config{Encryption: EncryptNotSup})
	for name, input := range tests {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, s)
			if _, err := c.prelogin(prelogin.EncryptNotSup); err != nil {
				t.Fatal(err)
			}
			if _, err := c.login(s.Config.user(), s.Config.password(), 4096); err != nil {
				t.Fatal(err)
			}
			if _, err := c.raw.Write(input); err != nil {
				t.Fatal(err)
			}
			// Random input may also look like a request the server answers; either way the
			// connection must end once the client closes its side.
			_ = c.raw.(*net.TCPConn).CloseWrite()
			c.expectClosed()
		})
	}
	// The server still works.
	if err := queryWithDeadline(t, s.DSN("encrypt=disable")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "panic") {
		t.Errorf("panic logged:\n%s", log)
	}
	for _, want := range []string{"ALL_HEADERS", "odd number of bytes", "read request"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestMalformedLogin7(t *testing.T) {
	s, log := startServer(t, Config{Encryption: EncryptNotSup})
	c := dialRaw(t, s)
	if _, err := c.prelogin(prelogin.EncryptNotSup); err != nil {
		t.Fatal(err)
	}
	b := encodeLogin7(goodLogin7())
	binary.LittleEndian.PutUint16(b[40:], 60000) // UserName offset outside the message
	if err := c.w.WriteMessage(tds.TypeLogin7, b); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "malformed LOGIN7: UserName at offset 60000") {
		t.Errorf("log:\n%s", log)
	}
}

// TestCloseEndsEveryConnection: Close returns with connections in every early state, and no
// goroutine is left (goleak in TestMain).
func TestCloseEndsEveryConnection(t *testing.T) {
	s, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	dial := func() net.Conn {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	dial()                                                      // silent
	_, _ = dial().Write([]byte{0x12})                           // first byte only
	_, _ = dial().Write(packet(tds.TypePrelogin, 0, []byte{0})) // half a message
	rc := dialRaw(t, s)                                         // mid-handshake: PRELOGIN done, no TLS
	if _, err := rc.prelogin(prelogin.EncryptOn); err != nil {
		t.Fatal(err)
	}
	strict := dial() // TLS ClientHello start only
	_, _ = strict.Write([]byte{0x16, 0x03, 0x01})
	time.Sleep(50 * time.Millisecond) // let the server accept them (not a timing assertion)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		_ = c.Close()
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		t.Error("listener still open after Close")
	}
}

func TestServerAPI(t *testing.T) {
	s, err := NewUnstartedServer(Config{User: "u@x", Password: "p&ss word"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Certificate() != nil || s.TLSConfig() != nil || s.CertPool() != nil || s.CAFile() != "" {
		t.Fatal("certificate before Start")
	}
	s.Config.Cert = CertLargeChain
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("second Start accepted")
	}
	defer s.Close()
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Fatalf("Addr %q", s.Addr)
	}
	want := "sqlserver://u%40x:p&ss%20word@" + s.Addr + "?encrypt=true&packet+size=16384"
	if got := s.DSN("encrypt=true", "packet size=16384"); got != want {
		t.Fatalf("DSN %q, want %q", got, want)
	}
	if s.Certificate() == s.CACertificate() || s.Certificate() == nil {
		t.Fatal("large chain: leaf and CA")
	}
	if s.CertPool() == nil {
		t.Fatal("CertPool nil")
	}
	// TLSConfig trusts the server in strict mode too (TLS directly on TCP).
	s2, _ := startServer(t, Config{Encryption: EncryptStrict})
	cfg := s2.TLSConfig()
	cfg.NextProtos = []string{alpnTDS8}
	tc, err := tls.Dial("tcp", s2.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := tc.ConnectionState()
	_ = tc.Close()
	if st.NegotiatedProtocol != alpnTDS8 || st.Version != tls.VersionTLS13 {
		t.Fatalf("strict: ALPN %q, version %x", st.NegotiatedProtocol, st.Version)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown encryption": {Encryption: EncryptStrict + 1},
		"record size":        {RecordSize: 16385},
		"negative record":    {RecordSize: -1},
		"cert":               {Cert: CertNegativeSerial + 1},
		"TLS version":        {MinTLSVersion: 0x0300},
		"TLS versions":       {MinTLSVersion: tls.VersionTLS12, MaxTLSVersion: tls.VersionTLS10},
		"cipher suite":       {CipherSuites: []uint16{0x0001}},
		"addr not loopback":  {Addr: "0.0.0.0:0"},
		"addr name":          {Addr: "localhost:0"},
		"addr without port":  {Addr: "127.0.0.1"},
	} {
		if _, err := NewServer(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestConfigAddr(t *testing.T) {
	s, _ := startServer(t, Config{Addr: "127.0.0.1:0"})
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") || strings.HasSuffix(s.Addr, ":0") {
		t.Fatalf("Addr %q", s.Addr)
	}
	if err := queryWithDeadline(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost")); err != nil {
		t.Fatal(err)
	}
}
