package login7

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// vector74 is a TDS 7.4 LOGIN7 message in the canonical layout, with a FeatureExt block
// holding FEDAUTH (security token, echo) and UTF8_SUPPORT.
var vector74 = []byte{
	0x8D, 0x00, 0x00, 0x00, // Length: 141
	0x04, 0x00, 0x00, 0x74, // TDSVersion: 7.4 (0x74000004)
	0x00, 0x10, 0x00, 0x00, // PacketSize: 4096
	0x00, 0x00, 0x00, 0x07, // ClientProgVer: 0x07000000
	0x00, 0x01, 0x00, 0x00, // ClientPID: 256
	0x00, 0x00, 0x00, 0x00, // ConnectionID: 0
	0xE0,                   // OptionFlags1: fUseDB | fSetLang | fDatabase fatal
	0x03,                   // OptionFlags2: fLanguage fatal | fODBC
	0x00,                   // TypeFlags
	0x10,                   // OptionFlags3: fExtension
	0xE0, 0x01, 0x00, 0x00, // ClientTimeZone: 480
	0x09, 0x04, 0x00, 0x00, // ClientLCID: 0x0409
	0x5E, 0x00, 0x01, 0x00, // HostName: at 94, 1 character
	0x60, 0x00, 0x02, 0x00, // UserName: at 96, 2 characters
	0x64, 0x00, 0x02, 0x00, // Password: at 100, 2 characters
	0x68, 0x00, 0x01, 0x00, // AppName: at 104, 1 character
	0x6A, 0x00, 0x01, 0x00, // ServerName: at 106, 1 character
	0x6C, 0x00, 0x04, 0x00, // Extension: at 108, 4 bytes
	0x70, 0x00, 0x02, 0x00, // CltIntName: at 112, 2 characters
	0x74, 0x00, 0x00, 0x00, // Language: at 116, empty
	0x74, 0x00, 0x02, 0x00, // Database: at 116, 2 characters
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // ClientID
	0x78, 0x00, 0x00, 0x00, // SSPI: at 120, empty
	0x78, 0x00, 0x00, 0x00, // AtchDBFile: at 120, empty
	0x78, 0x00, 0x00, 0x00, // ChangePassword: at 120, empty
	0x00, 0x00, 0x00, 0x00, // cbSSPILong: 0
	0x68, 0x00, // 94 HostName: "h"
	0x73, 0x00, 0x61, 0x00, // 96 UserName: "sa"
	0xA2, 0xA5, 0xD2, 0xA5, // 100 Password: "pw" obfuscated (nibbles swapped, XOR 0xA5)
	0x61, 0x00, // 104 AppName: "a"
	0x73, 0x00, // 106 ServerName: "s"
	0x78, 0x00, 0x00, 0x00, // 108 Extension: ibFeatureExtLong 120
	0x67, 0x00, 0x6F, 0x00, // 112 CltIntName: "go"
	0x64, 0x00, 0x62, 0x00, // 116 Database: "db"
	0x02, 0x09, 0x00, 0x00, 0x00, // 120 FeatureExt: FEDAUTH, 9 bytes
	0x03,                   // 125 options: library 0x01 (security token) << 1 | fFedAuthEcho
	0x04, 0x00, 0x00, 0x00, // 126 token length: 4 bytes
	0x74, 0x00, 0x6B, 0x00, // 130 token: "tk"
	0x0A, 0x01, 0x00, 0x00, 0x00, // 134 FeatureExt: UTF8_SUPPORT, 1 byte
	0x01, // 139 its data
	0xFF, // 140 FeatureExt terminator
}

// vector74Message is vector74 decoded, its Layout aside.
func vector74Message() Message {
	return Message{
		TDSVersion: 0x74000004, PacketSize: 4096, ClientProgVer: 0x07000000, ClientPID: 256,
		OptionFlags1: 0xE0, OptionFlags2: 0x03, OptionFlags3: FlagExtension,
		ClientTimeZone: 480, ClientLCID: 0x0409, ClientID: [6]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55},
		HostName: "h", UserName: "sa", Password: "pw", AppName: "a", ServerName: "s",
		CltIntName: "go", Database: "db",
		Features: []Feature{
			{ID: FeatureFedAuth, Data: []byte{0x03, 0x04, 0x00, 0x00, 0x00, 0x74, 0x00, 0x6B, 0x00}},
			{ID: 0x0A, Data: []byte{0x01}},
		},
		FedAuth: &FedAuth{Library: FedAuthLibrarySecurityToken, Echo: true, Token: "tk"},
	}
}

// vector71 is a TDS 7.1 LOGIN7 message: an 86-byte fixed part, without ChangePassword and
// cbSSPILong, and with the fExtension bit, which TDS 7.1 does not have, ignored.
var vector71 = []byte{
	0x5C, 0x00, 0x00, 0x00, // Length: 92
	0x01, 0x00, 0x00, 0x71, // TDSVersion: 7.1 revision 1 (0x71000001)
	0x00, 0x02, 0x00, 0x00, // PacketSize: 512
	0x00, 0x00, 0x00, 0x00, // ClientProgVer
	0x00, 0x00, 0x00, 0x00, // ClientPID
	0x00, 0x00, 0x00, 0x00, // ConnectionID
	0x00, 0x00, 0x00, // OptionFlags1, OptionFlags2, TypeFlags
	0x10,                   // OptionFlags3: bit 4 set, meaningless before TDS 7.4
	0x00, 0x00, 0x00, 0x00, // ClientTimeZone
	0x00, 0x00, 0x00, 0x00, // ClientLCID
	0x56, 0x00, 0x00, 0x00, // HostName: at 86, empty
	0x56, 0x00, 0x01, 0x00, // UserName: at 86, 1 character
	0x58, 0x00, 0x02, 0x00, // Password: at 88, 2 characters
	0x5C, 0x00, 0x00, 0x00, // AppName: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // ServerName: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // Unused: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // CltIntName: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // Language: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // Database: at 92, empty
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // ClientID
	0x5C, 0x00, 0x00, 0x00, // SSPI: at 92, empty
	0x5C, 0x00, 0x00, 0x00, // AtchDBFile: at 92, empty
	0x75, 0x00, // 86 UserName: "u"
	0x13, 0xA5, 0x63, 0xA5, // 88 Password: "kl" obfuscated
}

func TestDecodeVectors(t *testing.T) {
	v71 := Message{TDSVersion: 0x71000001, PacketSize: 512, OptionFlags3: FlagExtension, UserName: "u", Password: "kl"}
	for name, tc := range map[string]struct {
		msg   []byte
		want  Message
		spans map[Field]Span
	}{
		"7.4": {vector74, vector74Message(), map[Field]Span{
			FieldHostName: {94, 96}, FieldUserName: {96, 100}, FieldPassword: {100, 104}, FieldAppName: {104, 106},
			FieldServerName: {106, 108}, FieldExtension: {108, 112}, FieldCltIntName: {112, 116}, FieldDatabase: {116, 120},
		}},
		"7.1": {vector71, v71, map[Field]Span{FieldUserName: {86, 88}, FieldPassword: {88, 92}}},
	} {
		t.Run(name, func(t *testing.T) {
			orig := bytes.Clone(tc.msg)
			var m Message
			if err := m.Decode(tc.msg); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tc.msg, orig) {
				t.Fatal("Decode modified its input")
			}
			for f := range Field(numFields) {
				if got := m.Layout.Span(f); got != tc.spans[f] {
					t.Errorf("Span(%v) = %v, want %v", f, got, tc.spans[f])
				}
			}
			got := m
			got.Layout = Layout{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", got, tc.want)
			}
			out, err := m.Encode([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]byte("prefix"), tc.msg...); !bytes.Equal(out, want) {
				t.Fatalf("Encode:\n% x\nwant\n% x", out, want)
			}
			var back Message
			if err := back.Decode(out[len("prefix"):]); err != nil {
				t.Fatal(err)
			}
			back.Layout = Layout{}
			if !reflect.DeepEqual(back, tc.want) {
				t.Fatalf("round trip\n %+v\nwant\n %+v", back, tc.want)
			}
		})
	}
}

func TestParseFeatures(t *testing.T) {
	l, err := Parse(vector74)
	if err != nil {
		t.Fatal(err)
	}
	want := []FeatureSpan{{ID: FeatureFedAuth, At: 120, Data: Span{125, 134}}, {ID: 0x0A, At: 134, Data: Span{139, 140}}}
	if !slices.Equal(l.Features, want) || l.FeatureExt != (Span{120, 141}) || l.Len != len(vector74) || l.TDSVersion != 0x74000004 {
		t.Fatalf("layout %+v", l)
	}
}
