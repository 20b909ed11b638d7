package tdstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// plainClient is a client that sends LOGIN7 as its first message (no PRELOGIN), as legacy
// clients do, and then SQL batches, all in plaintext.
type plainClient struct {
	t   *testing.T
	raw net.Conn
	r   *tds.Reader
	w   *tds.Writer
}

func dialPlain(t *testing.T, s *Server) *plainClient {
	t.Helper()
	raw, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	_ = raw.SetDeadline(time.Now().Add(20 * time.Second))
	return &plainClient{t: t, raw: raw, r: tds.NewReader(raw, tds.ReaderConfig{}), w: tds.NewWriter(raw, tds.DefaultPacketSize)}
}

// roundTrip sends one message and returns the response payload.
func (c *plainClient) roundTrip(typ tds.PacketType, payload []byte) ([]byte, error) {
	if err := c.w.WriteMessage(typ, payload); err != nil {
		return nil, err
	}
	_, resp, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), resp...), nil
}

// TestLoginLegacyVersions: LOGIN7 of TDS 7.0 and 7.1 (sent without PRELOGIN, as those clients
// do) is answered with LOGINACK at the client's version (MS-TDS 2.2.7.14) and tokens of the
// pre-7.2 layout: 16-bit UserType, 32-bit DONE row counts; batches carry no ALL_HEADERS.
func TestLoginLegacyVersions(t *testing.T) {
	tests := []struct {
		name    string
		version uint32
		ack     uint32
	}{
		{"7.0", verTDS70, 0x07000000},
		{"7.1", verTDS71, 0x07010000},
		{"7.1 revision 1", verTDS71A, 0x71000001},
		{"7.2 for comparison", verTDS72, verTDS72},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, log := startServer(t, Config{Encryption: EncryptNotSup})
			c := dialPlain(t, s)
			l := goodLogin7()
			l.version = tc.version
			resp, err := c.roundTrip(tds.TypeLogin7, encodeLogin7(l))
			if err != nil {
				t.Fatal(err)
			}
			ack := binary.BigEndian.AppendUint32([]byte{tokenLoginAck}, 0)
			i := bytes.IndexByte(resp, tokenLoginAck)
			if i < 0 || len(resp) < i+8 {
				t.Fatalf("no LOGINACK in %x", resp)
			}
			if got := binary.BigEndian.Uint32(resp[i+4:]); got != tc.ack {
				t.Fatalf("LOGINACK version %#08x, want %#08x (%x)", got, tc.ack, ack)
			}
			legacy := isLegacyTDS(tc.version)
			doneLen := 13
			if legacy {
				doneLen = 9
			}
			if len(resp) < doneLen || resp[len(resp)-doneLen] != tokenDone {
				t.Fatalf("login response does not end with a %d-byte DONE: %x", doneLen, resp)
			}
			batch := ucs2.Append(nil, "SELECT 1")
			if !legacy {
				batch = batchMessage("SELECT 1")
			}
			resp, err = c.roundTrip(tds.TypeSQLBatch, batch)
			if err != nil {
				t.Fatal(err)
			}
			want := cat([]byte{tokenColMetadata}, le16(1), le32(0), le16(0), []byte{byte(dtInt4), 0}, // UserType u32, Flags, INT4, no name
				[]byte{tokenRow}, le32(1), []byte{tokenDone}, le16(doneCount), le16(curCmdSelect), le64(1))
			if legacy {
				want = cat([]byte{tokenColMetadata}, le16(1), le16(0), le16(0), []byte{byte(dtInt4), 0}, // UserType u16
					[]byte{tokenRow}, le32(1), []byte{tokenDone}, le16(doneCount), le16(curCmdSelect), le32(1))
			}
			if !bytes.Equal(resp, want) {
				t.Fatalf("SELECT 1:\n got %x\nwant %x", resp, want)
			}
			log.wantMode(t, prelogin.ModeNone.String(), 4096)
			if !strings.Contains(log.String(), "LOGIN7 without PRELOGIN: no encryption") {
				t.Error("server log lacks the PRELOGIN-less login")
			}
		})
	}
}

// TestLoginWithoutPrelogin: a LOGIN7 first is accepted without encryption when the server's
// setting is OFF or NOT_SUP, and refused with a login error when it is ON (encryption required).
func TestLoginWithoutPrelogin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		accept bool
	}{
		{"OFF", Config{Encryption: EncryptOff}, true},
		{"NOT_SUP", Config{Encryption: EncryptNotSup}, true},
		{"ON", Config{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, log := startServer(t, tc.cfg)
			c := dialPlain(t, s)
			resp, err := c.roundTrip(tds.TypeLogin7, encodeLogin7(goodLogin7()))
			if err != nil {
				t.Fatal(err)
			}
			_, acked := findToken(resp, tokenLoginAck)
			msg, failed := findToken(resp, tokenError)
			if tc.accept {
				if !acked || failed {
					t.Fatalf("login refused: %x", resp)
				}
				resp, err := c.roundTrip(tds.TypeSQLBatch, batchMessage("SELECT 1"))
				if err != nil {
					t.Fatal(err)
				}
				if row, ok := findToken(resp, tokenRow); !ok || fmt.Sprint(row.values) != "[1]" {
					t.Fatalf("SELECT 1 after a PRELOGIN-less login: %x", resp)
				}
				log.wantMode(t, prelogin.ModeNone.String(), 4096)
				return
			}
			if acked || !failed || msg.number != 18456 || !strings.Contains(msg.text, "requires encryption") {
				t.Fatalf("login accepted or refused without a clear error: %+v %x", msg, resp)
			}
			c.expectClosedPlain()
			if !strings.Contains(log.String(), "LOGIN7 without PRELOGIN refused") {
				t.Error("server log lacks the refusal")
			}
		})
	}
}

func (c *plainClient) expectClosedPlain() {
	c.t.Helper()
	buf := make([]byte, 1)
	if _, err := c.raw.Read(buf); err == nil {
		c.t.Fatal("server kept the connection open")
	}
}

// hasLine reports whether out has a line that is want once trimmed.
func hasLine(out, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// TestFreeTDSLegacyVersions runs FreeTDS tsql with tds version 7.0 and 7.1 (without encryption,
// which those versions of FreeTDS do not negotiate).
func TestFreeTDSLegacyVersions(t *testing.T) {
	tsql := lookTool(t, "tsql", "Debian package freetds-bin")
	for _, version := range []string{"7.0", "7.1"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s, log := startServer(t, Config{Encryption: EncryptNotSup})
			conf := filepath.Join(t.TempDir(), "freetds.conf")
			text := fmt.Sprintf("[tdstest]\n\thost = 127.0.0.1\n\tport = %d\n\ttds version = %s\n\tencryption = off\n", port(t, s), version)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(toolContext(t), tsql, "-S", "tdstest", "-U", s.Config.user(), "-P", s.Config.password())
			cmd.Env = append(os.Environ(), "FREETDSCONF="+conf)
			// The (max) value reaches these versions as ntext (longtypes.go).
			cmd.Stdin = strings.NewReader("SELECT 42\ngo\nSELECT N'héllo'\ngo\n" + queryBig + "\ngo\nexit\n")
			out := runTool(t, cmd)
			if !strings.Contains(out, "42") || !strings.Contains(out, "héllo") {
				t.Fatalf("tsql output:\n%.1000s", out)
			}
			if !hasLine(out, strings.Repeat("x", bigLen)) {
				t.Fatalf("tsql output lacks the %d-character ntext value:\n%.1000s", bigLen, out)
			}
			want := map[string]string{"7.0": "TDS 0x70000000", "7.1": "TDS 0x71"}[version]
			if !strings.Contains(log.String(), want) {
				t.Errorf("server log lacks a login at %s", want)
			}
		})
	}
}

func TestColMetadataLegacy(t *testing.T) {
	name := typeInfo{Type: dtNVarChar, Size: 100, Collation: serverCollation}
	cols := []column{{Name: "n", TI: &name}}
	for _, tc := range []struct {
		ver  uint32
		want []byte
	}{
		{verTDS74, cat([]byte{tokenColMetadata}, le16(1), le32(0), le16(colFlagNullable), []byte{0xE7}, le16(100), serverCollation[:], []byte{1, 'n', 0})},
		{verTDS71A, cat([]byte{tokenColMetadata}, le16(1), le16(0), le16(colFlagNullable), []byte{0xE7}, le16(100), serverCollation[:], []byte{1, 'n', 0})},
		{verTDS70, cat([]byte{tokenColMetadata}, le16(1), le16(0), le16(colFlagNullable), []byte{0xE7}, le16(100), []byte{1, 'n', 0})},
	} {
		if got := appendColMetadataFor(nil, tc.ver, cols); !bytes.Equal(got, tc.want) {
			t.Errorf("TDS %#08x: %x, want %x", tc.ver, got, tc.want)
		}
	}
}
