package tdstest

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	l7 "github.com/tdsbridge/tdsbridge/login7"
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

// encodeLogin7 builds a LOGIN7 payload the way clients do, with login7's encoder.
func encodeLogin7(l testLogin7) []byte {
	m := l7.Message{
		TDSVersion: l.version, PacketSize: l.packetSize, ClientProgVer: 0x07000000, ClientPID: 4242,
		OptionFlags1: 0xE0, // fUseDB | fSetLang | ...
		OptionFlags2: 0x03, // fODBC | fLanguage
		HostName:     l.host, UserName: l.user, Password: l.password, AppName: l.app, ServerName: l.srv,
		CltIntName: l.lib, Language: l.lang, Database: l.database, SSPI: l.sspi,
	}
	if l.featureExt != nil {
		m.Features = []l7.Feature{}
	}
	for b := l.featureExt; len(b) > 0; {
		n := 5 + int(binary.LittleEndian.Uint32(b[1:]))
		m.Features = append(m.Features, l7.Feature{ID: b[0], Data: b[5:n]})
		b = b[n:]
	}
	b, err := m.Encode(nil)
	if err != nil {
		panic(err)
	}
	return b
}

func goodLogin7() testLogin7 {
	return testLogin7{version: verTDS74, packetSize: 4096, host: "host", user: "sa", password: "tdstest-Passw0rd",
		app: "app", srv: "127.0.0.1", lib: "go-mssqldb", lang: "", database: "master"}
}

func TestParseLogin7(t *testing.T) {
	in := goodLogin7()
	in.password = "pä$$wörd😀"
	in.sspi = []byte{1, 2, 3}
	in.featureExt = []byte{0x0A, 1, 0, 0, 0, 0x01} // UTF8_SUPPORT-like entry with one data byte
	l, err := parseLogin7(encodeLogin7(in))
	if err != nil {
		t.Fatal(err)
	}
	if l.TDSVersion != verTDS74 || l.PacketSize != 4096 || l.UserName != "sa" || l.Password != in.password ||
		l.HostName != "host" || l.AppName != "app" || l.ServerName != "127.0.0.1" || l.CtlIntName != "go-mssqldb" ||
		l.Database != "master" || len(l.Features) != 1 || l.SSPILen != 3 || l.ClientPID != 4242 || l.FedAuth != nil {
		t.Fatalf("parsed %+v", l)
	}
}

// TestParseLogin7Errors: parseLogin7 refuses what login7 refuses (its tests have the cases),
// with errLogin7 and the field named.
func TestParseLogin7Errors(t *testing.T) {
	le := binary.LittleEndian
	tests := map[string]struct {
		mutate func(b []byte) []byte
		want   string
	}{
		"short":         {func(b []byte) []byte { return b[:40] }, "shorter than the fixed part"},
		"old version":   {func(b []byte) []byte { le.PutUint32(b[4:], 0x06000000); return b }, "TDSVersion 0x06000000 unknown"},
		"long user":     {func(b []byte) []byte { le.PutUint16(b[42:], 150); return b }, "UserName has 150 characters"},
		"user outside":  {func(b []byte) []byte { le.PutUint16(b[40:], 60000); return b }, "malformed LOGIN7: UserName at offset 60000"},
		"no terminator": {func(b []byte) []byte { b[len(b)-1] = 0x05; return b }, "truncated"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := goodLogin7()
			in.featureExt = []byte{0x0A, 1, 0, 0, 0, 0x01}
			in.app = strings.Repeat("a", 128) // room for a user name of 150 characters
			_, err := parseLogin7(tc.mutate(encodeLogin7(in)))
			if !errors.Is(err, errLogin7) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want errLogin7 mentioning %q", err, tc.want)
			}
		})
	}
}
