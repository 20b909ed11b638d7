package mssqlbridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/login7"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// testLogin7 is what buildLogin7 encodes: the variable fields of a LOGIN7 message.
type testLogin7 struct {
	version                   uint32 // TDSVersion; 0 means 7.4 (0x74000004)
	host, user, app, database string
	password, newPassword     []byte // already obfuscated, as they travel
	// passwordChars and newPasswordChars are the cch values written; 0 means the number of
	// UTF-16 code units (len/2). go-mssqldb writes the number of characters, fewer when a
	// secret has characters outside the Basic Multilingual Plane.
	passwordChars, newPasswordChars int
	fedAuthToken                    []byte // FEDAUTH feature data follows when non-nil
	fedAuthLibrary                  byte   // bFedAuthLibrary of that feature; 0 means 0x01, security token
}

// buildLogin7 encodes l in the layout go-mssqldb uses (MS-TDS 2.2.6.4): the 94-byte fixed
// part, then host name, user name, password, application name, database, new password, the
// extension DWORD and FeatureExt (FEDAUTH, security-token library: options byte, token length,
// token; then the terminator).
func buildLogin7(l testLogin7) []byte {
	le := binary.LittleEndian
	ucs2 := func(s string) []byte {
		var b []byte
		for _, r := range utf16.Encode([]rune(s)) {
			b = le.AppendUint16(b, r)
		}
		return b
	}
	msg := make([]byte, login7.FixedLen)
	version := l.version
	if version == 0 {
		version = 0x74000004
	}
	le.PutUint32(msg[login7.OffTDSVersion:], version)
	le.PutUint32(msg[login7.OffPacketSize:], 4096)
	put := func(at int, data []byte, count int) {
		le.PutUint16(msg[at:], uint16(len(msg)))
		le.PutUint16(msg[at+2:], uint16(count))
		msg = append(msg, data...)
	}
	put(login7.FieldHostName.EntryAt(), ucs2(l.host), len(ucs2(l.host))/2)
	put(login7.FieldUserName.EntryAt(), ucs2(l.user), len(ucs2(l.user))/2)
	chars := func(b []byte, n int) int {
		if n == 0 {
			return len(b) / 2
		}
		return n
	}
	put(login7.FieldPassword.EntryAt(), l.password, chars(l.password, l.passwordChars))
	put(login7.FieldAppName.EntryAt(), ucs2(l.app), len(ucs2(l.app))/2)
	put(login7.FieldDatabase.EntryAt(), ucs2(l.database), len(ucs2(l.database))/2)
	put(login7.FieldChangePassword.EntryAt(), l.newPassword, chars(l.newPassword, l.newPasswordChars))
	if l.fedAuthToken != nil {
		msg[login7.OffOptionFlags3] |= login7.FlagExtension
		le.PutUint16(msg[login7.FieldExtension.EntryAt():], uint16(len(msg)))
		le.PutUint16(msg[login7.FieldExtension.EntryAt()+2:], 4)
		msg = le.AppendUint32(msg, uint32(len(msg)+4))
		library := l.fedAuthLibrary
		if library == 0 {
			library = login7.FedAuthLibrarySecurityToken
		}
		data := append([]byte{library << 1}, le.AppendUint32(nil, uint32(len(l.fedAuthToken)))...)
		data = append(data, l.fedAuthToken...)
		msg = append(msg, login7.FeatureFedAuth)
		msg = le.AppendUint32(msg, uint32(len(data)))
		msg = append(msg, data...)
		msg = append(msg, login7.FeatureTerminator)
	}
	le.PutUint32(msg, uint32(len(msg)))
	return msg
}

// secret returns n bytes of a pattern that occurs nowhere else in a test's traffic. The
// pattern repeats every few bytes, so any clear run of it longer than 32 bytes contains its
// first 32 bytes.
func secret(tag string, n int) []byte {
	return []byte(strings.Repeat("<"+tag+"#", n)[:n])
}

func TestLogin7Secrets(t *testing.T) {
	pw := secret("pw", 20)
	newPW := secret("new", 30)
	token := secret("tok", 6000)
	long := strings.Repeat("h", 3000)
	for _, tc := range []struct {
		name    string
		msg     []byte
		want    []secretField
		wantErr bool
	}{
		{"password only", buildLogin7(testLogin7{user: "sa", password: pw}), []secretField{fieldPassword}, false},
		{"no password", buildLogin7(testLogin7{user: "sa"}), nil, false},
		{"long names before the password", buildLogin7(testLogin7{host: long, user: long, password: pw}), []secretField{fieldPassword}, false},
		{"password change", buildLogin7(testLogin7{password: pw, newPassword: newPW}), []secretField{fieldPassword, fieldChangePassword}, false},
		{"FEDAUTH token", buildLogin7(testLogin7{fedAuthToken: token}), []secretField{fieldFedAuth}, false},
		{"password outside the BMP, cch in characters", buildLogin7(testLogin7{host: long, password: nonBMP(20), passwordChars: 20, app: "app"}), []secretField{fieldPassword}, false},
		{"new password outside the BMP, last field", buildLogin7(testLogin7{password: pw, newPassword: nonBMP(30), newPasswordChars: 30}), []secretField{fieldPassword, fieldChangePassword}, false},
		{"TDS 7.1: no new password field", func() []byte {
			m := buildLogin7(testLogin7{version: 0x71000001, password: pw})
			binary.LittleEndian.PutUint16(m[login7.FieldChangePassword.EntryAt()+2:], 0xFFFF) // ignored before 7.2
			return m
		}(), []secretField{fieldPassword}, false},
		{"too short", make([]byte, 40), nil, true},
		{"length field wrong", func() []byte {
			m := buildLogin7(testLogin7{password: pw})
			binary.LittleEndian.PutUint32(m, 9999)
			return m
		}(), nil, true},
		{"password past the end", func() []byte {
			m := buildLogin7(testLogin7{password: pw})
			binary.LittleEndian.PutUint16(m[login7.FieldPassword.EntryAt()+2:], 5000)
			return m
		}(), nil, true},
		{"FeatureExt offset past the end", func() []byte {
			m := buildLogin7(testLogin7{fedAuthToken: token})
			ib := binary.LittleEndian.Uint16(m[login7.FieldExtension.EntryAt():])
			binary.LittleEndian.PutUint32(m[ib:], 0xFFFFFFF0)
			return m
		}(), nil, true},
		{"FeatureExt without terminator", func() []byte {
			m := buildLogin7(testLogin7{fedAuthToken: token})
			m = m[:len(m)-1]
			binary.LittleEndian.PutUint32(m, uint32(len(m)))
			return m
		}(), nil, true},
		{"feature length past the end", func() []byte {
			m := buildLogin7(testLogin7{fedAuthToken: token})
			at := len(m) - 1 - len(token) - 5 - 5 // feature id of FEDAUTH
			binary.LittleEndian.PutUint32(m[at+1:], 0x7FFFFFFF)
			return m
		}(), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := parseLogin7(tc.msg)
			if tc.wantErr {
				if !errors.Is(err, login7.ErrMalformed) {
					t.Fatalf("got %v, want login7.ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []secretField
			for _, sp := range l.secrets {
				got = append(got, sp.field)
				data := tc.msg[sp.start:sp.end]
				var want []byte
				switch sp.field {
				case fieldPassword:
					want = pw
				case fieldChangePassword:
					want = newPW
				case fieldFedAuth:
					want = token
				}
				if !bytes.Contains(data, want) && !bytes.Contains(data, nonBMP(1)) {
					t.Errorf("%v span [%d,%d) does not hold the secret", sp.field, sp.start, sp.end)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
		})
	}
}

// nonBMP returns n characters outside the Basic Multilingual Plane in UTF-16LE: four bytes each.
func nonBMP(n int) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(strings.Repeat("\U0001F512", n))) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// TestLogin7SecretsLaterToken: a FEDAUTH feature of the workflow whose token follows LOGIN7
// (bFedAuthLibrary 0x02) is reported; one that carries the token itself is not.
func TestLogin7SecretsLaterToken(t *testing.T) {
	for library, want := range map[byte]bool{0x00: false, 0x01: false, login7.FedAuthLibraryADAL: true} {
		msg := buildLogin7(testLogin7{user: "u", fedAuthToken: []byte{0x01}, fedAuthLibrary: library})
		if library == 0 {
			msg[len(msg)-2-5] = 0x00 // the options byte: Live ID, which buildLogin7's 0 does not give
		}
		l, err := parseLogin7(msg)
		if err != nil {
			t.Fatal(err)
		}
		if l.laterToken != want {
			t.Errorf("library 0x%02x: laterToken %v, want %v", library, l.laterToken, want)
		}
	}
}

// FuzzLogin7Secrets: parseLogin7 never panics, and every span it returns lies inside the
// message and covers at least the 2*cch bytes its field announces.
func FuzzLogin7Secrets(f *testing.F) {
	f.Add(buildLogin7(testLogin7{user: "sa", password: []byte("pwpw")}))
	f.Add(buildLogin7(testLogin7{password: []byte("pwpw"), newPassword: []byte("nwnw")}))
	f.Add(buildLogin7(testLogin7{fedAuthToken: []byte("token")}))
	f.Add(buildLogin7(testLogin7{version: 0x70000000, password: []byte("pw")}))
	f.Add(make([]byte, login7.FixedLen))
	f.Add(buildLogin7(testLogin7{host: "h", password: nonBMP(3), passwordChars: 3, app: "a"}))
	f.Add(buildLogin7(testLogin7{user: "u", fedAuthToken: []byte{0x01}, fedAuthLibrary: login7.FedAuthLibraryADAL}))
	f.Fuzz(func(t *testing.T, msg []byte) {
		l, err := parseLogin7(msg)
		if err != nil {
			return
		}
		for _, sp := range l.secrets {
			if sp.start < 0 || sp.start > sp.end || sp.end > len(msg) {
				t.Fatalf("span %+v outside a %d-byte message", sp, len(msg))
			}
			at := map[secretField]int{fieldPassword: login7.FieldPassword.EntryAt(), fieldChangePassword: login7.FieldChangePassword.EntryAt()}
			if a, ok := at[sp.field]; ok && sp.end-sp.start < 2*int(binary.LittleEndian.Uint16(msg[a+2:])) {
				t.Fatalf("span %+v shorter than the %v's cch", sp, sp.field)
			}
		}
	})
}

// TestLoginOnlySecretsNeverInClear drives the conn as go-mssqldb would in login-only mode,
// with LOGIN7 messages of several packets, through a recording proxy: over-long names before
// the password, a long new password, a FEDAUTH token of several KiB. Each message is either
// sent with every secret in its first packet, inside TLS, or refused with ErrSecretOutsideTLS
// before any byte of it leaves; in both cases no secret occurs in the client's bytes on the
// wire.
func TestLoginOnlySecretsNeverInClear(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOff, false)
	pw := secret("pw", 40)
	newPW := secret("new", 256)
	long := strings.Repeat("n", 1000)   // 2000 bytes in UCS-2
	longer := strings.Repeat("d", 3000) // 6000 bytes
	for _, tc := range []struct {
		name       string
		login      testLogin7
		packetSize int // the driver's
		refused    bool
	}{
		{"long names, packet size 512", testLogin7{host: long, user: long[:600], password: pw, database: long}, 512, false},
		{"names past 4096, packet size 512", testLogin7{host: long, user: long, password: pw, database: long}, 512, true},
		{"names past 4096, packet size 8192", testLogin7{host: long, user: long, password: pw, database: longer}, 8192, false},
		{"long new password, packet size 512", testLogin7{host: long[:600], password: pw, newPassword: newPW}, 512, false},
		{"new password past 4096, packet size 512", testLogin7{host: long, user: long[:900], password: pw, app: long, newPassword: newPW}, 512, true},
		{"FEDAUTH token of 3 KiB, packet size 512", testLogin7{user: "u", fedAuthToken: secret("tok", 3<<10)}, 512, false},
		{"FEDAUTH token of 6 KiB, packet size 4096", testLogin7{user: "u", fedAuthToken: secret("tok", 6<<10)}, 4096, true},
		{"FEDAUTH token of 6 KiB, packet size 8192 (one packet)", testLogin7{user: "u", fedAuthToken: secret("tok", 6<<10)}, 8192, false},
		{"FEDAUTH token of 12 KiB, packet size 8192", testLogin7{user: "u", fedAuthToken: secret("tok", 12<<10)}, 8192, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := buildLogin7(tc.login)
			m := newMITM(t, srv.addr(), prelogin.EncryptOff)
			c, err := dialTest(t, testSettings(t, pki, 0 /* EncryptionOff */), m.ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write(clientPrelogin()); err != nil {
				t.Fatalf("PRELOGIN: %v", err)
			}
			if c.state() != stateLoginOnly {
				t.Fatalf("state %v, want login-only", c.state())
			}
			if _, _, err := tds.NewReader(c, tds.ReaderConfig{}).ReadMessage(); err != nil {
				t.Fatalf("PRELOGIN reply: %v", err)
			}
			werr := tds.NewWriter(c, tc.packetSize).WriteMessage(tds.TypeLogin7, msg)
			switch {
			case tc.refused && !errors.Is(werr, ErrSecretOutsideTLS):
				t.Fatalf("LOGIN7: %v, want ErrSecretOutsideTLS", werr)
			case !tc.refused && werr != nil:
				t.Fatalf("LOGIN7: %v", werr)
			case !tc.refused:
				// The server echoes the LOGIN7 packets; reading them proves they arrived.
				rd := tds.NewReader(c, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize, MaxMessageSize: 1 << 20})
				got := 0
				for got < len(msg) {
					_, body, err := rd.ReadPacket()
					if err != nil {
						t.Fatalf("echo after %d of %d bytes: %v", got, len(msg), err)
					}
					got += len(body)
				}
			}
			t.Logf("LOGIN7 of %d bytes at packet size %d: %v", len(msg), tc.packetSize, werr)
			_ = c.Close()
			_ = m.ln.Close()
			m.wg.Wait()
			_, wire := m.observed()
			if tc.refused {
				// Only the TLS handshake, inside PRELOGIN packets, may have left: no LOGIN7
				// packet and no TLS record outside a PRELOGIN packet.
				for rest := wire; len(rest) > 0; {
					h, err := tds.ParseHeader(rest)
					if err != nil || h.Type != tds.TypePrelogin || int(h.Length) > len(rest) {
						t.Fatalf("after the refusal the client sent bytes other than the handshake: % x", rest[:min(len(rest), 16)])
					}
					rest = rest[h.Length:]
				}
			}
			for name, s := range map[string][]byte{"password": pw, "new password": newPW, "token": tc.login.fedAuthToken} {
				if len(s) > 0 && bytes.Contains(wire, s[:min(len(s), 32)]) {
					t.Errorf("the %s crossed the wire in clear", name)
				}
			}
		})
	}
}

// TestLoginOnlyFedAuthTokenGoMssqldb: go-mssqldb's own LOGIN7 with a FEDAUTH security token (its
// security-token connector, on the bridge's dialer) in login-only mode, through a recording
// proxy. A token that go-mssqldb splits over 512-byte packets but that fits in 4096 bytes is
// re-framed into the TLS packet and reaches the server, which answers the login; a token of
// 6,000 bytes at packet size 4096 is refused with ErrSecretOutsideTLS. In neither case does
// any part of the token cross the wire in clear.
func TestLoginOnlyFedAuthTokenGoMssqldb(t *testing.T) {
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff})
	for _, tc := range []struct {
		name       string
		chars      int // token length; UCS-2 on the wire, two bytes a character
		packetSize int
		refused    bool
	}{
		{"3000-byte token at packet size 512", 1500, 512, false},
		{"6000-byte token at packet size 4096", 3000, 4096, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := string(secret("tok", tc.chars))
			m := newMITM(t, srv.Addr, prelogin.EncryptOff)
			cfg, files, err := parseDSN(fmt.Sprintf("sqlserver://%s?encrypt=false&TrustServerCertificate=true&packet+size=%d", m.ln.Addr(), tc.packetSize))
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSettings(cfg, files, options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := mssql.NewSecurityTokenConnector(driverConfig(cfg), func(context.Context) (string, error) { return token, nil })
			if err != nil {
				t.Fatal(err)
			}
			c.Dialer = &dialer{s: s}
			db := openDB(t, c)
			db.SetMaxIdleConns(0)
			qerr := selectOne(db)
			t.Logf("query: %v", qerr)
			var serverErr mssql.Error
			switch {
			case tc.refused && !errors.Is(qerr, ErrSecretOutsideTLS):
				t.Fatalf("query: %v, want ErrSecretOutsideTLS", qerr)
			case !tc.refused && qerr != nil && !errors.As(qerr, &serverErr):
				t.Fatalf("query: %v, want success or the server's answer to the login", qerr)
			}
			_ = db.Close()
			_ = m.ln.Close()
			m.wg.Wait()
			_, wire := m.observed()
			var prefix []byte
			for _, r := range token[:32] {
				prefix = append(prefix, byte(r), 0) // UTF-16LE, as go-mssqldb encodes the token
			}
			if bytes.Contains(wire, prefix) {
				t.Errorf("the token crossed the wire in clear")
			}
		})
	}
}

// loginWire is what a client sent after its PRELOGIN, split by how it travelled.
type loginWire struct {
	records int    // TLS records written straight on the socket after the handshake
	plain   []byte // the bodies of the LOGIN7 packets that followed in plaintext, joined
}

// splitLoginWire splits the client's bytes after its PRELOGIN in login-only mode: the TLS
// handshake inside PRELOGIN packets, then TLS records (the first LOGIN7 packet), then plaintext
// TDS packets. It fails the test on anything else.
func splitLoginWire(t *testing.T, wire []byte) loginWire {
	t.Helper()
	var w loginWire
	for len(wire) > 0 && tds.PacketType(wire[0]) == tds.TypePrelogin {
		h, err := tds.ParseHeader(wire)
		if err != nil || int(h.Length) > len(wire) {
			t.Fatalf("a handshake packet cut short: % x", wire[:min(len(wire), 16)])
		}
		wire = wire[h.Length:]
	}
	for len(wire) >= 5 && wire[0] >= 0x14 && wire[0] <= 0x17 && wire[1] == 3 {
		n := 5 + int(binary.BigEndian.Uint16(wire[3:]))
		if n > len(wire) {
			t.Fatalf("a TLS record cut short: %d of %d bytes", len(wire), n)
		}
		w.records++
		wire = wire[n:]
	}
	for len(wire) > 0 {
		h, err := tds.ParseHeader(wire)
		if err != nil || h.Type != tds.TypeLogin7 || int(h.Length) > len(wire) {
			t.Fatalf("after the TLS records, bytes that are not a LOGIN7 packet: % x", wire[:min(len(wire), 16)])
		}
		w.plain = append(w.plain, wire[tds.HeaderSize:h.Length]...)
		wire = wire[h.Length:]
	}
	return w
}

// TestLoginOnlySecretPositions builds LOGIN7 messages with a secret of every width (BMP
// characters, characters outside the BMP with cch counting characters as go-mssqldb does,
// empty) ending at every even offset around the packet boundaries that matter (the driver's
// 512-byte packets; the 4096-byte first packet the conn re-frames to), for the password, the
// new password and a FEDAUTH token, written by the driver at packet sizes 512 and 4096. It
// sends each through the real conn, in login-only mode, to a server behind a recording proxy,
// and asserts from the bytes on the wire that no byte of a secret left outside a TLS record:
// the plaintext LOGIN7 bytes are the message's tail, which starts at or past the secret's end.
// A message whose secret does not fit in the first packet is refused with ErrSecretOutsideTLS
// and no LOGIN7 byte leaves.
func TestLoginOnlySecretPositions(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOff, false)
	const room = tds.DefaultPacketSize - tds.HeaderSize // the first packet's body after re-framing
	widths := []struct {
		name  string
		bytes []byte
		chars int // cch; 0: len/2
	}{
		{"one BMP character", []byte("p\x00"), 0},
		{"50 BMP characters", secret("pw", 100), 0},
		{"one character outside the BMP", nonBMP(1), 1},
		{"100 characters outside the BMP", nonBMP(100), 100},
		{"empty", nil, 0},
	}
	var ends []int
	for e := room - 8; e <= room+8; e += 2 {
		ends = append(ends, e)
	}
	ends = append(ends, 504, 506, 512, 518, 1016, 1024) // around the driver's 512-byte packets
	fields := []secretField{fieldPassword, fieldChangePassword, fieldFedAuth}
	n := 0
	for _, field := range fields {
		for _, wd := range widths {
			if field == fieldFedAuth && wd.chars != 0 {
				continue // a token's length is in bytes
			}
			for _, end := range ends {
				for _, packetSize := range []int{512, tds.DefaultPacketSize} {
					l, ok := placeSecret(field, wd.bytes, wd.chars, end)
					if !ok {
						continue
					}
					n++
					name := fmt.Sprintf("%v/%s/end %d/packet size %d", field, wd.name, end, packetSize)
					t.Run(name, func(t *testing.T) {
						checkLoginOnlyWire(t, srv, pki, l, packetSize)
					})
				}
			}
		}
	}
	t.Logf("%d messages", n)
}

// placeSecret returns a LOGIN7 message whose field holds secret and ends at byte end of the
// message, the host name padded to place it there; ok is false when it cannot end there.
func placeSecret(field secretField, secret []byte, chars, end int) (l testLogin7, ok bool) {
	var before int // bytes between the fixed part's end and the secret, the host name excluded
	switch field {
	case fieldPassword:
		l = testLogin7{password: secret, passwordChars: chars, app: "app"}
	case fieldChangePassword:
		l = testLogin7{password: []byte("x\x00y\x00"), app: "app", newPassword: secret, newPasswordChars: chars}
		before = 4 + 6 // the password, the application name
	case fieldFedAuth:
		l = testLogin7{user: "u", fedAuthToken: secret}
		before = 2 + 4 + 5 + 5 // user name, ibFeatureExtLong, feature header, options and token length
	}
	padding := end - len(secret) - login7.FixedLen - before
	if padding < 0 || padding%2 != 0 {
		return l, false
	}
	l.host = strings.Repeat("h", padding/2)
	return l, true
}

// secretsOf returns where the secrets of l lie in msg, its encoding, as bytes [start, end), from
// what buildLogin7 wrote: the offsets in the fixed part and the secrets' own lengths (not cch).
func secretsOf(l testLogin7, msg []byte) [][2]int {
	le := binary.LittleEndian
	var spans [][2]int
	add := func(start int, b []byte) {
		if len(b) > 0 {
			spans = append(spans, [2]int{start, start + len(b)})
		}
	}
	add(int(le.Uint16(msg[login7.FieldPassword.EntryAt():])), l.password)
	add(int(le.Uint16(msg[login7.FieldChangePassword.EntryAt():])), l.newPassword)
	if l.fedAuthToken != nil {
		ext := int(le.Uint32(msg[le.Uint16(msg[login7.FieldExtension.EntryAt():]):]))
		add(ext+5+5, l.fedAuthToken)
	}
	return spans
}

// checkLoginOnlyWire sends the LOGIN7 message of l through a conn in login-only mode at the
// driver's packet size and checks what crossed the wire (see TestLoginOnlySecretPositions).
func checkLoginOnlyWire(t *testing.T, srv *fakeServer, pki *testPKI, l testLogin7, packetSize int) {
	msg := buildLogin7(l)
	spans := secretsOf(l, msg)
	refused := false
	for _, sp := range spans {
		refused = refused || sp[1] > tds.DefaultPacketSize-tds.HeaderSize
	}
	m := newMITM(t, srv.addr(), prelogin.EncryptOff)
	c := loginOnlyConn(t, pki, m)
	werr := tds.NewWriter(c, packetSize).WriteMessage(tds.TypeLogin7, msg)
	switch {
	case refused && !errors.Is(werr, ErrSecretOutsideTLS):
		t.Fatalf("LOGIN7 of %d bytes, secrets at %v: %v, want ErrSecretOutsideTLS", len(msg), spans, werr)
	case !refused && werr != nil:
		t.Fatalf("LOGIN7 of %d bytes, secrets at %v: %v", len(msg), spans, werr)
	case !refused:
		// The echo of the first packet proves the server has it; the rest follows in order.
		if _, _, err := tds.NewReader(c, tds.ReaderConfig{MaxPacketSize: tds.MaxPacketSize}).ReadPacket(); err != nil {
			t.Fatalf("echo: %v", err)
		}
	}
	_ = c.Close()
	_ = m.ln.Close()
	m.wg.Wait()
	_, wire := m.observed()
	w := splitLoginWire(t, wire)
	switch {
	case refused && (w.records > 0 || len(w.plain) > 0):
		t.Fatalf("refused, yet %d TLS records and %d plaintext LOGIN7 bytes left", w.records, len(w.plain))
	case refused:
		return
	case w.records == 0:
		t.Fatal("no TLS record carried the first LOGIN7 packet")
	}
	tail := len(msg) - len(w.plain)
	if !bytes.Equal(w.plain, msg[tail:]) {
		t.Fatalf("the plaintext LOGIN7 bytes are not the message's last %d bytes", len(w.plain))
	}
	for _, sp := range spans {
		if tail < sp[1] {
			t.Fatalf("bytes %d..%d of a secret at %v crossed in plaintext", tail, sp[1], sp)
		}
	}
}

// loginOnlyConn returns a conn in login-only mode, its PRELOGIN reply read, to srv through m.
func loginOnlyConn(t *testing.T, pki *testPKI, m *mitm) *conn {
	t.Helper()
	c, err := dialTest(t, testSettings(t, pki, 0 /* EncryptionOff */), m.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	exchangePrelogin(t, c)
	return c
}

// TestLoginOnlyOversizedFirstPacket: a LOGIN7 whose first packet says it is larger than the
// largest packet a tds.Writer makes (40000 bytes here) is measured at the size the conn
// re-frames it to, tds.MaxPacketSize, so a password past that is refused, not sent in clear
// in the second packet.
func TestLoginOnlyOversizedFirstPacket(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOff, false)
	pw := secret("pw", 40)
	l, ok := placeSecret(fieldPassword, pw, 0, 34094+len(pw))
	if !ok {
		t.Fatal("cannot place the password")
	}
	l.database = strings.Repeat("d", 3000) // after the password: the message passes 40000 bytes
	msg := buildLogin7(l)
	m := newMITM(t, srv.addr(), prelogin.EncryptOff)
	c := loginOnlyConn(t, pki, m)
	const first = 40000 - tds.HeaderSize
	h := tds.Header{Type: tds.TypeLogin7, Length: 40000, PacketID: 1}
	if _, err := c.Write(append(h.Append(nil), msg[:first]...)); err != nil {
		t.Fatalf("first packet: %v", err)
	}
	_, err := c.Write(packet(tds.TypeLogin7, msg[first:]))
	if !errors.Is(err, ErrSecretOutsideTLS) {
		t.Fatalf("last packet: %v, want ErrSecretOutsideTLS", err)
	}
	t.Log(err)
	_ = c.Close()
	_ = m.ln.Close()
	m.wg.Wait()
	_, wire := m.observed()
	if w := splitLoginWire(t, wire); w.records > 0 || len(w.plain) > 0 {
		t.Fatalf("refused, yet %d TLS records and %d plaintext LOGIN7 bytes left", w.records, len(w.plain))
	}
}

// TestLoginOnlyFedAuthTokenMessage: after a login-only LOGIN7, a FEDAUTH_TOKEN message (the
// token of the workflow in which the server asks for it with FEDAUTHINFO) is refused with
// ErrSecretOutsideTLS and does not reach the wire, where it would be plaintext.
func TestLoginOnlyFedAuthTokenMessage(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOff, false)
	m := newMITM(t, srv.addr(), prelogin.EncryptOff)
	c := loginOnlyConn(t, pki, m)
	roundTrip(t, c, tds.TypeLogin7, buildLogin7(testLogin7{user: "u", password: secret("pw", 8)}))
	token := secret("tok", 64)
	_, err := c.Write(packet(tds.TypeFedAuthToken, token))
	if !errors.Is(err, ErrSecretOutsideTLS) {
		t.Fatalf("FEDAUTH_TOKEN: %v, want ErrSecretOutsideTLS", err)
	}
	roundTrip(t, c, tds.TypeSQLBatch, []byte("still plaintext"))
	_ = c.Close()
	_ = m.ln.Close()
	m.wg.Wait()
	if _, wire := m.observed(); bytes.Contains(wire, token[:32]) {
		t.Fatal("the token crossed the wire in clear")
	}
}

// TestLoginOnlyADALWorkflowGoMssqldb: go-mssqldb's NewActiveDirectoryTokenConnector (the
// workflow of most azuread methods, whose token follows LOGIN7 in a message of its own) on the
// bridge's dialer with encrypt=false is refused at LOGIN7 with ErrSecretOutsideTLS: the token
// provider is never called and no LOGIN7 byte leaves. With encrypt=true the same login goes
// through TLS to the server (which answers it; tdstest refuses this library).
func TestLoginOnlyADALWorkflowGoMssqldb(t *testing.T) {
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff, FedAuthToken: "unused"})
	for _, encrypt := range []string{"false", "true"} {
		t.Run("encrypt="+encrypt, func(t *testing.T) {
			reply := prelogin.EncryptOff // what the server replies; the proxy keeps it
			if encrypt == "true" {
				reply = prelogin.EncryptOn
			}
			m := newMITM(t, srv.Addr, reply)
			cfg, files, err := parseDSN(fmt.Sprintf("sqlserver://%s?encrypt=%s&TrustServerCertificate=true", m.ln.Addr(), encrypt))
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSettings(cfg, files, options{})
			if err != nil {
				t.Fatal(err)
			}
			var asked atomic.Int32
			c, err := mssql.NewActiveDirectoryTokenConnector(driverConfig(cfg), 0x01, func(context.Context, string, string) (string, error) {
				asked.Add(1)
				return "secret-token", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			c.Dialer = &dialer{s: s}
			db := openDB(t, c)
			db.SetMaxIdleConns(0)
			qerr := selectOne(db)
			t.Logf("query: %v", qerr)
			if encrypt == "true" {
				var serverErr mssql.Error
				if !errors.As(qerr, &serverErr) {
					t.Fatalf("query: %v, want the server's answer to the login", qerr)
				}
				return
			}
			if !errors.Is(qerr, ErrSecretOutsideTLS) {
				t.Fatalf("query: %v, want ErrSecretOutsideTLS", qerr)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the token provider was called %d times", n)
			}
			_ = db.Close()
			_ = m.ln.Close()
			m.wg.Wait()
			_, wire := m.observed()
			if w := splitLoginWire(t, wire); w.records > 0 || len(w.plain) > 0 {
				t.Fatalf("refused, yet %d TLS records and %d plaintext LOGIN7 bytes left", w.records, len(w.plain))
			}
		})
	}
}
