package mssqlbridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// testLogin7 is what buildLogin7 encodes: the variable fields of a LOGIN7 message.
type testLogin7 struct {
	version                   uint32 // TDSVersion; 0 means 7.4 (0x74000004)
	host, user, app, database string
	password, newPassword     []byte // already obfuscated, as they travel
	fedAuthToken              []byte // FEDAUTH feature data follows when non-nil
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
	msg := make([]byte, login7FixedV72)
	version := l.version
	if version == 0 {
		version = 0x74000004
	}
	le.PutUint32(msg[4:], version)
	le.PutUint32(msg[8:], 4096)
	put := func(at int, data []byte, count int) {
		le.PutUint16(msg[at:], uint16(len(msg)))
		le.PutUint16(msg[at+2:], uint16(count))
		msg = append(msg, data...)
	}
	put(36, ucs2(l.host), len(ucs2(l.host))/2)
	put(40, ucs2(l.user), len(ucs2(l.user))/2)
	put(login7PasswordAt, l.password, len(l.password)/2)
	put(48, ucs2(l.app), len(ucs2(l.app))/2)
	put(68, ucs2(l.database), len(ucs2(l.database))/2)
	put(login7ChangePassAt, l.newPassword, len(l.newPassword)/2)
	if l.fedAuthToken != nil {
		msg[login7OptionFlags3] |= login7FExtension
		le.PutUint16(msg[login7ExtensionAt:], uint16(len(msg)))
		le.PutUint16(msg[login7ExtensionAt+2:], 4)
		msg = le.AppendUint32(msg, uint32(len(msg)+4))
		data := append([]byte{0x01 << 1}, le.AppendUint32(nil, uint32(len(l.fedAuthToken)))...)
		data = append(data, l.fedAuthToken...)
		msg = append(msg, featureFedAuth)
		msg = le.AppendUint32(msg, uint32(len(data)))
		msg = append(msg, data...)
		msg = append(msg, featureExtTerminator)
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
		want    []login7Field
		wantErr bool
	}{
		{"password only", buildLogin7(testLogin7{user: "sa", password: pw}), []login7Field{fieldPassword}, false},
		{"no password", buildLogin7(testLogin7{user: "sa"}), nil, false},
		{"long names before the password", buildLogin7(testLogin7{host: long, user: long, password: pw}), []login7Field{fieldPassword}, false},
		{"password change", buildLogin7(testLogin7{password: pw, newPassword: newPW}), []login7Field{fieldPassword, fieldChangePassword}, false},
		{"FEDAUTH token", buildLogin7(testLogin7{fedAuthToken: token}), []login7Field{fieldFedAuth}, false},
		{"TDS 7.1: no new password field", func() []byte {
			m := buildLogin7(testLogin7{version: 0x71000001, password: pw})
			binary.LittleEndian.PutUint16(m[login7ChangePassAt+2:], 0xFFFF) // ignored before 7.2
			return m
		}(), []login7Field{fieldPassword}, false},
		{"too short", make([]byte, 40), nil, true},
		{"length field wrong", func() []byte {
			m := buildLogin7(testLogin7{password: pw})
			binary.LittleEndian.PutUint32(m, 9999)
			return m
		}(), nil, true},
		{"password past the end", func() []byte {
			m := buildLogin7(testLogin7{password: pw})
			binary.LittleEndian.PutUint16(m[login7PasswordAt+2:], 5000)
			return m
		}(), nil, true},
		{"FeatureExt offset past the end", func() []byte {
			m := buildLogin7(testLogin7{fedAuthToken: token})
			ib := binary.LittleEndian.Uint16(m[login7ExtensionAt:])
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
			spans, err := login7Secrets(tc.msg)
			if tc.wantErr {
				if !errors.Is(err, errLogin7) {
					t.Fatalf("got %v, want errLogin7", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []login7Field
			for _, sp := range spans {
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
				if !bytes.Contains(data, want) {
					t.Errorf("%v span [%d,%d) does not hold the secret", sp.field, sp.start, sp.end)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzLogin7Secrets: login7Secrets never panics, and every span it returns lies inside the
// message.
func FuzzLogin7Secrets(f *testing.F) {
	f.Add(buildLogin7(testLogin7{user: "sa", password: []byte("pwpw")}))
	f.Add(buildLogin7(testLogin7{password: []byte("pwpw"), newPassword: []byte("nwnw")}))
	f.Add(buildLogin7(testLogin7{fedAuthToken: []byte("token")}))
	f.Add(buildLogin7(testLogin7{version: 0x70000000, password: []byte("pw")}))
	f.Add(make([]byte, login7FixedV72))
	f.Fuzz(func(t *testing.T, msg []byte) {
		spans, err := login7Secrets(msg)
		if err != nil {
			return
		}
		for _, sp := range spans {
			if sp.start < 0 || sp.start > sp.end || sp.end > len(msg) {
				t.Fatalf("span %+v outside a %d-byte message", sp, len(msg))
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
