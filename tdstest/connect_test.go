package tdstest

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// resultToken is one token of a response, decoded by decodeResult.
type resultToken struct {
	typ            byte
	status, curCmd uint16 // DONE, DONEPROC, DONEINPROC
	count          uint64
	colTypes       []dataType // COLMETADATA
	colFlags       []uint16
	values         []any // ROW: int64, string, nil (NULL)
	number         int32 // ERROR
	text           string
}

// decodeResult decodes a response of the tokens and column types the connect queries produce
// (fixed integers, INTN, NVARCHAR, BIGVARCHAR, sql_variant of int or nvarchar), at TDS 7.1
// (legacy: 16-bit UserType, 32-bit DONE counts) or 7.2+. It fails the test on anything else.
func decodeResult(t *testing.T, b []byte, legacy bool) []resultToken {
	t.Helper()
	le := binary.LittleEndian
	var out []resultToken
	var cols []dataType
	fail := func(format string, args ...any) []resultToken {
		t.Helper()
		t.Fatalf("decodeResult: "+format+"\nresponse %x", append(args, b)...)
		return nil
	}
	need := func(b []byte, n int) bool { return len(b) >= n }
	for p := b; len(p) > 0; {
		tok := resultToken{typ: p[0]}
		p = p[1:]
		switch tok.typ {
		case tokenColMetadata:
			n := int(le.Uint16(p))
			p = p[2:]
			cols = cols[:0]
			for range n {
				if legacy {
					p = p[2:]
				} else {
					p = p[4:]
				}
				tok.colFlags = append(tok.colFlags, le.Uint16(p))
				typ := dataType(p[2])
				p = p[3:]
				switch typ {
				case dtInt1, dtInt2, dtInt4:
				case dtIntN:
					p = p[1:]
				case dtNVarChar, dtBigVarChar:
					p = p[2+5:]
				case dtVariant:
					p = p[4:]
				default:
					return fail("column type %v", typ)
				}
				p = p[1+2*int(p[0]):] // name
				cols = append(cols, typ)
			}
			tok.colTypes = append([]dataType(nil), cols...)
		case tokenRow:
			for _, typ := range cols {
				var v any
				switch typ {
				case dtInt1:
					v, p = int64(p[0]), p[1:]
				case dtInt2:
					v, p = int64(int16(le.Uint16(p))), p[2:]
				case dtInt4:
					v, p = int64(int32(le.Uint32(p))), p[4:]
				case dtIntN:
					n := int(p[0])
					if n > 0 {
						v = leInt(p[1 : 1+n])
					}
					p = p[1+n:]
				case dtNVarChar, dtBigVarChar:
					n := int(le.Uint16(p))
					if n == 0xFFFF {
						p = p[2:]
						break
					}
					if typ == dtNVarChar {
						v = ucs2.Decode(p[2 : 2+n])
					} else {
						v = string(p[2 : 2+n])
					}
					p = p[2+n:]
				case dtVariant:
					n := int(le.Uint32(p))
					inst := p[4 : 4+n]
					p = p[4+n:]
					if n == 0 {
						break
					}
					data := inst[2+int(inst[1]):]
					switch dataType(inst[0]) {
					case dtInt4:
						v = leInt(data)
					case dtNVarChar:
						v = ucs2.Decode(data)
					default:
						return fail("sql_variant base type %v", dataType(inst[0]))
					}
				}
				tok.values = append(tok.values, v)
			}
		case tokenReturnStatus:
			tok.count, p = uint64(le.Uint32(p)), p[4:]
		case tokenReturnValue:
			// ordinal, name, status, UserType u32, Flags, INTN(4) TYPE_INFO, value
			p = p[2:]
			tok.text = ucs2.Decode(p[1 : 1+2*int(p[0])])
			p = p[1+2*int(p[0]):]
			if p[7] != byte(dtIntN) || p[8] != 4 {
				return fail("RETURNVALUE of type 0x%02x", p[7])
			}
			n := int(p[9])
			var v any
			if n > 0 {
				v = leInt(p[10 : 10+n])
			}
			tok.values, p = []any{v}, p[10+n:]
		case tokenDone, tokenDoneProc, tokenDoneInProc:
			tok.status, tok.curCmd = le.Uint16(p), le.Uint16(p[2:])
			if legacy {
				tok.count, p = uint64(le.Uint32(p[4:])), p[8:]
			} else {
				tok.count, p = le.Uint64(p[4:]), p[12:]
			}
		case tokenError, tokenInfo, tokenEnvChange, tokenLoginAck:
			if !need(p, 2) {
				return fail("truncated token 0x%02x", tok.typ)
			}
			n := int(le.Uint16(p))
			body := p[2 : 2+n]
			if tok.typ == tokenError {
				tok.number = int32(le.Uint32(body))
				tok.text = ucs2.Decode(body[8 : 8+2*int(le.Uint16(body[6:]))])
			}
			p = p[2+n:]
		default:
			return fail("unexpected token 0x%02x", tok.typ)
		}
		out = append(out, tok)
	}
	return out
}

// javaConnectBatch is the first batch a Java TDS client (jTDS) sends after login.
const javaConnectBatch = "SELECT @@MAX_PRECISION\r\nSET TRANSACTION ISOLATION LEVEL READ COMMITTED\r\nSET IMPLICIT_TRANSACTIONS OFF\r\n" +
	"SET QUOTED_IDENTIFIER ON\r\nSET TEXTSIZE 2147483647"

// TestJavaConnectBatch: the connect batch of a Java client, after a LOGIN7 of TDS 7.1 (as that
// client sends it) or 7.4, with and without TLS, is answered as SQL Server answers it: the
// tinyint 38 NOT NULL with a DONE (more, count 1), then a DONE for each SET, the last one final.
func TestJavaConnectBatch(t *testing.T) {
	modes := []struct {
		name   string
		cfg    Config
		enc    prelogin.Encryption
		mode   prelogin.Mode
		useTLS bool
	}{
		{"none", Config{Encryption: EncryptNotSup}, prelogin.EncryptNotSup, prelogin.ModeNone, false},
		{"login-only", Config{Encryption: EncryptOff}, prelogin.EncryptOff, prelogin.ModeLoginOnly, true},
		{"full", Config{}, prelogin.EncryptOn, prelogin.ModeFull, true},
	}
	for _, m := range modes {
		for _, ver := range []uint32{verTDS71, verTDS74} {
			t.Run(fmt.Sprintf("%s, TDS %#08x", m.name, ver), func(t *testing.T) {
				s, log := startServer(t, m.cfg)
				c := dialRaw(t, s)
				c.version = ver
				if _, err := c.prelogin(m.enc); err != nil {
					t.Fatal(err)
				}
				if m.useTLS {
					if err := c.startTLS(s, nil); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := c.login(s.Config.user(), s.Config.password(), 4096); err != nil {
					t.Fatal(err)
				}
				legacy := isLegacyTDS(ver)
				msg := batchMessage(javaConnectBatch)
				if legacy {
					msg = ucs2.Append(nil, javaConnectBatch) // no ALL_HEADERS before TDS 7.2
				}
				if err := c.w.WriteMessage(tds.TypeSQLBatch, msg); err != nil {
					t.Fatal(err)
				}
				_, resp, err := c.r.ReadMessage()
				if err != nil {
					t.Fatal(err)
				}
				toks := decodeResult(t, resp, legacy)
				var kinds []byte
				for _, tk := range toks {
					kinds = append(kinds, tk.typ)
				}
				want := []byte{tokenColMetadata, tokenRow, tokenDone, tokenDone, tokenDone, tokenDone, tokenDone}
				if string(kinds) != string(want) {
					t.Fatalf("tokens % x, want % x", kinds, want)
				}
				if ct := toks[0].colTypes; len(ct) != 1 || ct[0] != dtInt1 || toks[0].colFlags[0]&colFlagNullable != 0 {
					t.Errorf("@@MAX_PRECISION column %v flags %v, want tinyint NOT NULL", ct, toks[0].colFlags)
				}
				if v := toks[1].values; len(v) != 1 || v[0] != int64(38) {
					t.Errorf("@@MAX_PRECISION = %v, want 38", v)
				}
				if d := toks[2]; d.status != doneMore|doneCount || d.curCmd != curCmdSelect || d.count != 1 {
					t.Errorf("SELECT's DONE %+v", d)
				}
				for i, d := range toks[3:] {
					wantStatus := uint16(doneMore)
					if i == 3 {
						wantStatus = doneFinal
					}
					if d.status != wantStatus || d.curCmd != curCmdSet {
						t.Errorf("SET %d: DONE status %#x curCmd %#x, want %#x, %#x", i+1, d.status, d.curCmd, wantStatus, curCmdSet)
					}
				}
				log.wantMode(t, m.mode.String(), 4096)
			})
		}
	}
}

// TestConnectQueries: the variables and functions drivers and tools read on connect, each
// with SQL Server's type, checked through the raw decoder and go-mssqldb in every mode.
func TestConnectQueries(t *testing.T) {
	const query = "SELECT @@MAX_PRECISION, @@SPID, @@TRANCOUNT, @@LANGUAGE, @@SERVERNAME, " +
		"SERVERPROPERTY('ProductVersion'), SERVERPROPERTY('EngineEdition'), SERVERPROPERTY('Edition'), SERVERPROPERTY('NoSuchProperty'), " +
		"DB_NAME(), SUSER_SNAME(), SYSTEM_USER, SCHEMA_NAME(), CAST(SERVERPROPERTY('ProductVersion') AS varchar), " +
		"CAST(SERVERPROPERTY('EngineEdition') AS int), @@LOCK_TIMEOUT, APP_NAME()"
	wantTypes := []dataType{dtInt1, dtInt2, dtInt4, dtNVarChar, dtNVarChar, dtVariant, dtVariant, dtVariant, dtVariant,
		dtNVarChar, dtNVarChar, dtNVarChar, dtNVarChar, dtBigVarChar, dtIntN, dtInt4, dtNVarChar}
	t.Run("raw", func(t *testing.T) {
		s, _ := startServer(t, Config{})
		c := dialRaw(t, s)
		c.connect(s, 4096)
		if _, err := c.query("USE tempdb"); err != nil {
			t.Fatal(err)
		}
		resp, err := c.query(query)
		if err != nil {
			t.Fatal(err)
		}
		toks := decodeResult(t, resp, false)
		if len(toks) != 3 || toks[0].typ != tokenColMetadata {
			t.Fatalf("tokens %+v", toks)
		}
		if got := toks[0].colTypes; fmt.Sprint(got) != fmt.Sprint(wantTypes) {
			t.Errorf("column types\n got %v\nwant %v", got, wantTypes)
		}
		want := []any{int64(38), int64(firstSPID), int64(0), "us_english", "TDSTEST",
			"16.0.1000.6", int64(3), "Developer Edition (64-bit)", nil,
			"tempdb", "sa", "sa", "dbo", "16.0.1000.6", int64(3), int64(-1), "app"}
		if got := toks[1].values; fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Errorf("values\n got %#v\nwant %#v", got, want)
		}
	})
	for _, m := range Modes() {
		t.Run("go-mssqldb "+m.Name, func(t *testing.T) {
			s, log := startServer(t, m.Config)
			db := openMSSQL(t, s.DSN("encrypt="+m.Encrypt, "certificate="+s.CAFile(), "hostnameincertificate=localhost", "app name=probe"))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			vals := make([]any, len(wantTypes))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := db.QueryRowContext(ctx, query).Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%#v", vals[5:9])
			if want := `[]interface {}{"16.0.1000.6", 3, "Developer Edition (64-bit)", interface {}(nil)}`; got != want {
				t.Errorf("SERVERPROPERTY through go-mssqldb's sql_variant decoder:\n got %s\nwant %s", got, want)
			}
			if vals[0] != int64(38) || vals[10] != s.Config.user() || vals[16] != "probe" || !strings.HasPrefix(fmt.Sprint(vals[13]), "16.0") {
				t.Errorf("values %#v", vals)
			}
			log.wantMode(t, m.Name, 4096)
		})
	}
}
