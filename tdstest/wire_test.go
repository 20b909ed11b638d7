package tdstest

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"net"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

func TestLoginResponseTokens(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	resp := c.connect(s, 8192)
	toks, err := decodeTokens(resp)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []byte
	for _, tk := range toks {
		kinds = append(kinds, tk.typ)
	}
	want := []byte{tokenEnvChange, tokenEnvChange, tokenEnvChange, tokenLoginAck, tokenEnvChange, tokenDone}
	if !bytes.Equal(kinds, want) {
		t.Fatalf("tokens % x, want % x", kinds, want)
	}
	if toks[4].env != envPacketSize || toks[4].text != "8192" {
		t.Errorf("packet size ENVCHANGE %d %q", toks[4].env, toks[4].text)
	}
	if toks[0].env != envDatabase || toks[0].text != "master" {
		t.Errorf("database ENVCHANGE %d %q", toks[0].env, toks[0].text)
	}
	if st := c.tc.ConnectionState(); st.Version != tls.VersionTLS12 {
		t.Errorf("TLS version %x inside PRELOGIN, want TLS 1.2", st.Version)
	}
}

func TestPacketSizeNegotiation(t *testing.T) {
	tests := []struct {
		name      string
		requested int
		want      string
	}{
		{"default", 0, "4096"},
		{"below minimum", 100, "512"},
		{"minimum", 512, "512"},
		{"encrypted cap", 32767, "16383"},
		{"16384 capped", 16384, "16383"},
	}
	s, _ := startServer(t, Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, s)
			if _, err := c.prelogin(prelogin.EncryptOn); err != nil {
				t.Fatal(err)
			}
			if err := c.startTLS(s, nil); err != nil {
				t.Fatal(err)
			}
			l := goodLogin7()
			l.packetSize = uint32(tc.requested)
			if err := c.w.WriteMessage(tds.TypeLogin7, encodeLogin7(l)); err != nil {
				t.Fatal(err)
			}
			_, payload, err := c.r.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			toks, err := decodeTokens(payload)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range toks {
				if tk.typ == tokenEnvChange && tk.env == envPacketSize {
					if tk.text != tc.want {
						t.Fatalf("packet size %q, want %s", tk.text, tc.want)
					}
					return
				}
			}
			t.Fatal("no packet size ENVCHANGE")
		})
	}
}

// TestRecordPerPacket checks that with the default settings every TLS record the server writes
// holds exactly one TDS packet.
func TestRecordPerPacket(t *testing.T) {
	for _, size := range []int{512, 4096, 16383} {
		s, _ := startServer(t, Config{})
		c := dialRaw(t, s)
		c.connect(s, size)
		c.rec.sizes = nil
		c.rec.pending = nil
		var all []byte
		c.src.r = teeReader{c.rec, &all}
		resp, err := c.query("SELECT REPLICATE(CAST(N'ab' AS nvarchar(max)), 100000)")
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := findToken(resp, tokenRow); !ok || v.values[0] != strings.Repeat("ab", 100000) {
			t.Fatalf("packet size %d: wrong value", size)
		}
		off := 0
		for i, n := range c.rec.sizes {
			h, err := tds.ParseHeader(all[off:])
			if err != nil {
				t.Fatal(err)
			}
			if int(h.Length) != n {
				t.Fatalf("packet size %d: record %d has %d bytes, packet %d", size, i, n, h.Length)
			}
			if n > size {
				t.Fatalf("packet size %d: record %d of %d bytes", size, i, n)
			}
			off += n
		}
		if len(c.rec.sizes) < 200000*2/size {
			t.Fatalf("packet size %d: only %d records", size, len(c.rec.sizes))
		}
	}
}

type teeReader struct {
	r   *recordReader
	all *[]byte
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	*t.all = append(*t.all, p[:n]...)
	return n, err
}

// TestRecordSize checks Config.RecordSize: records of exactly N bytes whatever the packets, the
// last record of a message carrying the remainder.
func TestRecordSize(t *testing.T) {
	for _, n := range []int{1024, 4096, 16384} {
		s, _ := startServer(t, Config{RecordSize: n})
		c := dialRaw(t, s)
		c.connect(s, 16383)
		c.rec.sizes = nil
		resp, err := c.query("SELECT CAST(REPLICATE(CAST('xyz' AS varchar(max)), 100000) AS varbinary(max))")
		if err != nil {
			t.Fatal(err)
		}
		tok, ok := findToken(resp, tokenRow)
		if !ok || !bytes.Equal(tok.values[0].([]byte), bytes.Repeat([]byte("xyz"), 100000)) {
			t.Fatalf("record size %d: wrong value", n)
		}
		sizes := c.rec.sizes
		total := 0
		for i, sz := range sizes {
			total += sz
			if i < len(sizes)-1 && sz != n {
				t.Fatalf("record size %d: record %d of %d has %d bytes", n, i, len(sizes), sz)
			}
		}
		if last := sizes[len(sizes)-1]; last > n || last == 0 {
			t.Fatalf("record size %d: last record %d bytes", n, last)
		}
		// Packets of 16383 bytes do not divide into records of n bytes: the records cut across
		// packet boundaries.
		if total < 300000 {
			t.Fatalf("record size %d: %d bytes in records", n, total)
		}
	}
}

func TestPLPChunks(t *testing.T) {
	var buf bytes.Buffer
	if err := writePLPRepeat(&buf, []byte("abc"), 10000); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := binary.LittleEndian.Uint64(b); got != 30000 {
		t.Fatalf("PLP total %d", got)
	}
	b = b[8:]
	var v []byte
	for {
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		if n == 0 {
			break
		}
		if n%3 != 0 || n > plpChunkTarget {
			t.Fatalf("chunk of %d bytes", n)
		}
		v = append(v, b[:n]...)
		b = b[n:]
	}
	if len(b) != 0 || !bytes.Equal(v, bytes.Repeat([]byte("abc"), 10000)) {
		t.Fatalf("PLP value wrong (%d bytes left)", len(b))
	}
	// An empty value is a total of 0 and the terminator only.
	buf.Reset()
	if err := writePLPRepeat(&buf, []byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), make([]byte, 12)) {
		t.Fatalf("empty PLP % x", buf.Bytes())
	}
}

func TestTokenBytes(t *testing.T) {
	tests := map[string]struct {
		got, want []byte
	}{
		"DONE count": {appendDone(nil, doneCount|doneMore, curCmdSelect, 1), []byte{
			0xFD,       // DONE
			0x11, 0x00, // status: DONE_MORE | DONE_COUNT
			0xC1, 0x00, // CurCmd: SELECT
			1, 0, 0, 0, 0, 0, 0, 0, // row count (u64)
		}},
		"ENVCHANGE packet size": {appendEnvChangePacketSize(nil, 8192, 4096), []byte{
			0xE3,       // ENVCHANGE
			0x13, 0x00, // length 19
			0x04,                                 // type: packet size
			0x04, '8', 0, '1', 0, '9', 0, '2', 0, // new value "8192"
			0x04, '4', 0, '0', 0, '9', 0, '6', 0, // old value "4096"
		}},
		"LOGINACK": {appendLoginAck(nil, verTDS74), []byte{
			0xAD,       // LOGINACK
			0x18, 0x00, // length 24
			0x01,                   // interface: T-SQL
			0x74, 0x00, 0x00, 0x04, // TDS 7.4, big-endian
			0x07, 't', 0, 'd', 0, 's', 0, 't', 0, 'e', 0, 's', 0, 't', 0, // ProgName
			16, 0, 0x03, 0xE8, // ProgVersion 16.0.1000
		}},
		"COLMETADATA int": {appendColMetadata(nil, []column{{TI: &tiInt4, NotNull: true}}), []byte{
			0x81,       // COLMETADATA
			0x01, 0x00, // one column
			0, 0, 0, 0, // UserType
			0x00, 0x00, // Flags
			0x38, // INT4
			0x00, // no name
		}},
		"COLMETADATA nvarchar(max)": {appendColMetadata(nil, []column{{TI: &typeInfo{Type: dtNVarChar, Size: plpMaxLen, Collation: serverCollation}, Name: "v"}}), []byte{
			0x81, 0x01, 0x00, // COLMETADATA, one column
			0, 0, 0, 0, // UserType
			0x01, 0x00, // Flags: nullable
			0xE7, 0xFF, 0xFF, // NVARCHAR(max)
			0x09, 0x04, 0xD0, 0x00, 0x34, // collation
			0x01, 'v', 0, // name "v"
		}},
	}
	for name, tc := range tests {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s:\n got % x\nwant % x", name, tc.got, tc.want)
		}
	}
	msg := appendMessage(nil, tokenError, serverMessage{Number: 18456, State: 1, Class: 14, Text: "no"})
	toks, err := decodeTokens(msg)
	if err != nil || len(toks) != 1 || toks[0].number != 18456 || toks[0].text != "no" {
		t.Fatalf("ERROR token %+v %v", toks, err)
	}
}

func TestAttention(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	if err := c.w.WriteMessage(tds.TypeAttention, nil); err != nil {
		t.Fatal(err)
	}
	_, payload, err := c.r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	done, ok := findToken(payload, tokenDone)
	if !ok || done.status&doneAttn == 0 {
		t.Fatalf("attention answered with % x", payload)
	}
	// The connection stays usable.
	resp, err := c.query("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := findToken(resp, tokenRow); !ok || row.values[0] != int32(1) {
		t.Fatalf("SELECT 1 after attention: % x", resp)
	}
}

func TestUnsupportedRequests(t *testing.T) {
	s, log := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	resp, err := c.query("SELECT name FROM sys.tables")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := findToken(resp, tokenError)
	if !ok || e.number != 50000 || !strings.Contains(e.text, "SELECT name FROM sys.tables") {
		t.Fatalf("unsupported query answered with %+v", e)
	}
	if done, _ := findToken(resp, tokenDone); done.status&doneError == 0 {
		t.Fatal("DONE without the error bit")
	}
	if err := c.w.WriteMessage(tds.TypeRPC, []byte{0xFF, 0xFF, 10, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	_, payload, err := c.r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := findToken(payload, tokenError); !ok || !strings.Contains(e.text, "RPC") {
		t.Fatalf("RPC answered with % x", payload)
	}
	resp, err = c.query("SELECT 7")
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := findToken(resp, tokenRow); !ok || row.values[0] != int32(7) {
		t.Fatalf("SELECT 7: % x", resp)
	}
	if !strings.Contains(log.String(), "refused") {
		t.Error("refusals not logged")
	}
}

func TestLoginFailed(t *testing.T) {
	s, log := startServer(t, Config{User: "alice", Password: "secret"})
	c := dialRaw(t, s)
	if _, err := c.prelogin(prelogin.EncryptOn); err != nil {
		t.Fatal(err)
	}
	if err := c.startTLS(s, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := c.login("alice", "wrong", 4096)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := findToken(resp, tokenError)
	if !ok || e.number != 18456 || e.text != "Login failed for user 'alice'." {
		t.Fatalf("login response %+v", e)
	}
	if _, ok := findToken(resp, tokenLoginAck); ok {
		t.Fatal("LOGINACK after a failed login")
	}
	if _, _, err := c.r.ReadMessage(); err == nil {
		t.Fatal("connection still open after a failed login")
	}
	if !strings.Contains(log.String(), "login failed for user \"alice\"") {
		t.Error("failed login not logged")
	}
}

func TestLoginOnlyRaw(t *testing.T) {
	s, log := startServer(t, Config{Encryption: EncryptOff})
	c := dialRaw(t, s)
	reply, err := c.prelogin(prelogin.EncryptOff)
	if err != nil || reply != prelogin.EncryptOff || c.mode != prelogin.ModeLoginOnly {
		t.Fatalf("reply %v mode %v err %v", reply, c.mode, err)
	}
	if err := c.startTLS(s, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := c.login(s.Config.user(), s.Config.password(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := findToken(resp, tokenLoginAck); !ok {
		t.Fatalf("no LOGINACK: % x", resp)
	}
	// The response came in plaintext: it parses as TDS straight from the socket.
	resp, err = c.query("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := findToken(resp, tokenRow); !ok || row.values[0] != int32(1) {
		t.Fatalf("SELECT 1: % x", resp)
	}
	log.wantMode(t, prelogin.ModeLoginOnly.String(), 4096)
}

// TestTLS13RefusedInsidePrelogin: like SQL Server, TLS inside PRELOGIN is capped at TLS 1.2.
func TestTLS13RefusedInsidePrelogin(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	if _, err := c.prelogin(prelogin.EncryptOn); err != nil {
		t.Fatal(err)
	}
	cfg := s.TLSConfig()
	cfg.MinVersion = tls.VersionTLS13
	if err := c.startTLS(s, cfg); err == nil {
		t.Fatal("TLS 1.3 handshake inside PRELOGIN succeeded")
	}
}

// captureConn records every byte read from the connection.
type captureConn struct {
	net.Conn
	got []byte
}

func (c *captureConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.got = append(c.got, p[:n]...)
	return n, err
}

// TestLargeChainSpansPackets: the server's first handshake flight with CertLargeChain is one
// PRELOGIN message of several packets (the chain is over 4096 bytes); with the default
// certificate it fits in one packet.
func TestLargeChainSpansPackets(t *testing.T) {
	for _, tc := range []struct {
		cert    CertKind
		packets func(n int) bool
	}{
		{CertLargeChain, func(n int) bool { return n >= 2 }},
		{CertECDSA, func(n int) bool { return n == 1 }},
	} {
		s, _ := startServer(t, Config{Cert: tc.cert})
		c := dialRaw(t, s)
		if _, err := c.prelogin(prelogin.EncryptOn); err != nil {
			t.Fatal(err)
		}
		cc := &captureConn{Conn: c.raw}
		c.raw = cc
		if err := c.startTLS(s, nil); err != nil {
			t.Fatal(err)
		}
		packets := 0
		for b := cc.got; len(b) >= tds.HeaderSize; {
			h, err := tds.ParseHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.Type != tds.TypePrelogin {
				t.Fatalf("%v: handshake packet of type %v", tc.cert, h.Type)
			}
			packets++
			if h.Status&tds.StatusEOM != 0 {
				break
			}
			b = b[h.Length:]
		}
		if !tc.packets(packets) {
			t.Errorf("%v: first flight in %d packets", tc.cert, packets)
		}
	}
}

// tmRequest builds a transaction manager request: ALL_HEADERS, request type, then body.
func tmRequest(rq uint16, body ...byte) []byte {
	b := batchMessage("")
	b = binary.LittleEndian.AppendUint16(b, rq)
	return append(b, body...)
}

func TestTransactionManager(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	send := func(req []byte) []token {
		t.Helper()
		if err := c.w.WriteMessage(tds.TypeTransactionManager, req); err != nil {
			t.Fatal(err)
		}
		_, payload, err := c.r.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		toks, err := decodeTokens(payload)
		if err != nil {
			t.Fatal(err)
		}
		return toks
	}
	// BEGIN: ENVCHANGE 8, new value = 8-byte descriptor, old value empty.
	toks := send(tmRequest(tmBeginXact, 0, 0))
	if toks[0].env != envBeginTran || len(toks[0].raw) != 10 || toks[0].raw[0] != 8 || toks[0].raw[9] != 0 {
		t.Fatalf("begin: %+v", toks)
	}
	id := toks[0].raw[1:9]
	// COMMIT with fBeginXact: ENVCHANGE 9 (old value = the descriptor), then ENVCHANGE 8.
	toks = send(tmRequest(tmCommitXact, 0, fBeginXact, 0, 0))
	if len(toks) != 3 || toks[0].env != envCommitTran || !bytes.Equal(toks[0].raw, append([]byte{0, 8}, id...)) ||
		toks[1].env != envBeginTran || bytes.Equal(toks[1].raw[1:9], id) {
		t.Fatalf("commit and begin: %+v", toks)
	}
	toks = send(tmRequest(tmRollbackXact, 0, 0))
	if len(toks) != 2 || toks[0].env != envRollbackTran {
		t.Fatalf("rollback: %+v", toks)
	}
	toks = send(tmRequest(0)) // TM_GET_DTC_ADDRESS
	if toks[0].typ != tokenError || toks[0].number != 50000 {
		t.Fatalf("DTC request: %+v", toks)
	}
	// A truncated request closes the connection.
	if err := c.w.WriteMessage(tds.TypeTransactionManager, tmRequest(tmCommitXact, 5)); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
}

// loginOnlyWriter sends the first packet through TLS and every later one in plaintext, as a
// login-only client does with a LOGIN7 of several packets.
type loginOnlyWriter struct {
	c     *rawClient
	sent  int
	plain bool
}

func (w *loginOnlyWriter) Write(p []byte) (int, error) {
	w.sent++
	if w.sent == 1 {
		return w.c.tc.Write(p)
	}
	if !w.plain {
		if err := w.c.b.StartPlaintext(); err != nil {
			return 0, err
		}
		w.plain = true
	}
	return w.c.b.Write(p)
}

// TestLoginOnlyMultiPacketLogin7: a LOGIN7 of three packets, the first inside TLS and the next two
// in plaintext right behind it, with login-only encryption.
func TestLoginOnlyMultiPacketLogin7(t *testing.T) {
	s, log := startServer(t, Config{Encryption: EncryptOff})
	c := dialRaw(t, s)
	if _, err := c.prelogin(prelogin.EncryptOff); err != nil {
		t.Fatal(err)
	}
	if err := c.startTLS(s, nil); err != nil {
		t.Fatal(err)
	}
	l := goodLogin7()
	l.featureExt = append([]byte{0x0B, 0x00, 0x20, 0x00, 0x00}, make([]byte, 0x2000)...) // 8 KiB of feature data
	msg := encodeLogin7(l)
	lw := &loginOnlyWriter{c: c}
	if err := tds.NewWriter(lw, tds.DefaultPacketSize).WriteMessage(tds.TypeLogin7, msg); err != nil {
		t.Fatal(err)
	}
	if lw.sent != 3 {
		t.Fatalf("LOGIN7 of %d bytes went out in %d packets", len(msg), lw.sent)
	}
	c.src.r = c.b
	c.w = tds.NewWriter(c.b, tds.DefaultPacketSize)
	_, payload, err := c.r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := findToken(payload, tokenLoginAck); !ok {
		t.Fatalf("no LOGINACK: % x", payload)
	}
	resp, err := c.query("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := findToken(resp, tokenRow); !ok || row.values[0] != int32(1) {
		t.Fatalf("SELECT 1: % x", resp)
	}
	log.wantMode(t, prelogin.ModeLoginOnly.String(), 4096)
}
