package tdstest

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/login7pw"
)

// testLogin7 describes a LOGIN7 message for encodeLogin7.
type testLogin7 struct {
	version    uint32
	packetSize uint32
	host, user string
	password   string
	app, srv   string
	lib, lang  string
	database   string
	sspi       []byte
	featureExt []byte // FeatureExt entries (without the 0xFF terminator); nil: no extension
}

// encodeLogin7 builds a LOGIN7 payload the way clients do (fixed part, offset table, UCS-2 data).
func encodeLogin7(l testLogin7) []byte {
	le := binary.LittleEndian
	header := login7HeaderLen
	if isLegacyTDS(l.version) {
		header = login7HeaderLen7 // no ChangePassword, no cbSSPILong before TDS 7.2
	}
	b := make([]byte, header)
	le.PutUint32(b[4:], l.version)
	le.PutUint32(b[8:], l.packetSize)
	le.PutUint32(b[12:], 0x07000000)
	le.PutUint32(b[16:], 4242)
	b[24] = 0xE0 // fUseDB | fSetLang | ...
	b[25] = 0x03 // fODBC | fLanguage
	put := func(pos int, data []byte, count int) {
		le.PutUint16(b[pos:], uint16(len(b)))
		le.PutUint16(b[pos+2:], uint16(count))
		b = append(b, data...)
	}
	str := func(pos int, s string) { put(pos, appendUCS2(nil, s), ucs2Len(s)) }
	str(36, l.host)
	str(40, l.user)
	put(44, login7pw.Obfuscate(appendUCS2(nil, l.password)), ucs2Len(l.password))
	str(48, l.app)
	str(52, l.srv)
	var extPtr int
	if l.featureExt != nil {
		b[27] |= optFlags3Extension
		extPtr = len(b)
		put(56, []byte{0, 0, 0, 0}, 4)
	}
	str(60, l.lib)
	str(64, l.lang)
	str(68, l.database)
	put(78, l.sspi, len(l.sspi))
	str(82, "")
	if !isLegacyTDS(l.version) {
		str(86, "")
	}
	if l.featureExt != nil {
		le.PutUint32(b[extPtr:], uint32(len(b)))
		b = append(b, l.featureExt...)
		b = append(b, featureExtTerm)
	}
	le.PutUint32(b[0:], uint32(len(b)))
	return b
}

func goodLogin7() testLogin7 {
	return testLogin7{version: verTDS74, packetSize: 4096, host: "host", user: "sa", password: "tdstest-Passw0rd",
		app: "app", srv: "127.0.0.1", lib: "go-mssqldb", lang: "", database: "master"}
}

func TestParseLogin7(t *testing.T) {
	in := goodLogin7()
	in.password = "pä$$wörd😀"
	in.featureExt = []byte{0x0A, 1, 0, 0, 0, 0x01} // UTF8_SUPPORT-like entry with one data byte
	l, err := parseLogin7(encodeLogin7(in))
	if err != nil {
		t.Fatal(err)
	}
	if l.TDSVersion != verTDS74 || l.PacketSize != 4096 || l.UserName != "sa" || l.Password != in.password ||
		l.HostName != "host" || l.AppName != "app" || l.ServerName != "127.0.0.1" || l.CtlIntName != "go-mssqldb" ||
		l.Database != "master" || !l.FeatureExt || l.SSPILen != 0 || l.ClientPID != 4242 {
		t.Fatalf("parsed %+v", l)
	}
}

func TestParseLogin7Errors(t *testing.T) {
	le := binary.LittleEndian
	tests := map[string]struct {
		mutate func(b []byte) []byte
		want   string
	}{
		"short":             {func(b []byte) []byte { return b[:40] }, "want at least"},
		"length too large":  {func(b []byte) []byte { le.PutUint32(b, uint32(len(b)+1)); return b }, "Length field"},
		"length too small":  {func(b []byte) []byte { le.PutUint32(b, 20); return b }, "Length field"},
		"old version":       {func(b []byte) []byte { le.PutUint32(b[4:], 0x06000000); return b }, "unsupported TDS version"},
		"user past end":     {func(b []byte) []byte { le.PutUint16(b[42:], 200); return b }, "UserName has 200 characters"},
		"user outside":      {func(b []byte) []byte { le.PutUint16(b[40:], uint16(len(b)-2)); return b }, "UserName at offset"},
		"offset in header":  {func(b []byte) []byte { le.PutUint16(b[36:], 10); return b }, "HostName at offset 10"},
		"password overflow": {func(b []byte) []byte { le.PutUint16(b[44:], 0xFFF0); return b }, "Password at offset"},
		"sspi long":         {func(b []byte) []byte { le.PutUint16(b[80:], 0xFFFF); le.PutUint32(b[90:], 1<<30); return b }, "cbSSPILong"},
		"changepassword":    {func(b []byte) []byte { le.PutUint16(b[86:], 60000); le.PutUint16(b[88:], 1); return b }, "ChangePassword"},
		"ext unterminated":  {func(b []byte) []byte { return b[:len(b)-1] }, "Length field"},
		"ext bad pointer": {func(b []byte) []byte {
			off := le.Uint16(b[56:])
			le.PutUint32(b[off:], 3)
			return b
		}, "FeatureExt offset 3"},
		"ext entry too long": {func(b []byte) []byte {
			off := le.Uint16(b[56:])
			p := le.Uint32(b[off:])
			le.PutUint32(b[p+1:], 1000)
			return b
		}, "has 1000 data bytes"},
		"ext no terminator": {func(b []byte) []byte {
			b[len(b)-1] = 0x05
			return b
		}, "truncated"},
		"ext flag without block": {func(b []byte) []byte { le.PutUint16(b[58:], 0); return b }, "cbExtension is 0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := goodLogin7()
			in.featureExt = []byte{0x0A, 1, 0, 0, 0, 0x01}
			_, err := parseLogin7(tc.mutate(encodeLogin7(in)))
			if !errors.Is(err, errLogin7) {
				t.Fatalf("err = %v, want errLogin7", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func FuzzParseLogin7(f *testing.F) {
	f.Add(encodeLogin7(goodLogin7()))
	in := goodLogin7()
	in.featureExt = []byte{0x0A, 1, 0, 0, 0, 0x01}
	in.sspi = []byte{1, 2, 3}
	f.Add(encodeLogin7(in))
	f.Add(make([]byte, login7HeaderLen))
	for _, v := range []uint32{verTDS70, verTDS71A} {
		legacy := goodLogin7()
		legacy.version = v
		f.Add(encodeLogin7(legacy))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLogin7(b)
		if err != nil {
			if !errors.Is(err, errLogin7) {
				t.Fatalf("error %v does not wrap errLogin7", err)
			}
			return
		}
		if len(l.UserName) > 4*login7MaxNameLen || len(l.Password) > 4*login7MaxPwdLen {
			t.Fatalf("oversized fields accepted: %d %d", len(l.UserName), len(l.Password))
		}
	})
}
