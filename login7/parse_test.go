package login7

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// mutated returns a copy of vector74 changed by f.
func mutated(f func(b []byte) []byte) []byte { return f(bytes.Clone(vector74)) }

func TestParseErrors(t *testing.T) {
	le := binary.LittleEndian
	put16 := func(at int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint16(b[at:], v); return b }
	}
	tests := map[string]struct {
		mutate func(b []byte) []byte
		item   string
		offset int
		want   string
	}{
		"short":           {func(b []byte) []byte { return b[:40] }, "message", -1, "of 40 bytes, shorter than the fixed part"},
		"too long":        {func(b []byte) []byte { return append(b, make([]byte, MaxLen)...) }, "message", -1, "longer than 131072"},
		"length large":    {func(b []byte) []byte { le.PutUint32(b, uint32(len(b)+1)); return b }, "Length", OffLength, "Length field 142, message has 141 bytes"},
		"length small":    {func(b []byte) []byte { le.PutUint32(b, 20); return b }, "Length", OffLength, "Length field 20"},
		"trailing byte":   {func(b []byte) []byte { return append(b, 0) }, "Length", OffLength, "message has 142 bytes"},
		"old version":     {func(b []byte) []byte { le.PutUint32(b[4:], 0x06000000); return b }, "TDSVersion", OffTDSVersion, "0x06000000 unknown"},
		"7.2 header":      {func(b []byte) []byte { b = b[:90]; le.PutUint32(b, 90); return b }, "message", -1, "shorter than the TDS 7.2 fixed part"},
		"user outside":    {put16(40, 139), "UserName", 40, "UserName at offset 139 length 4 lies outside the variable data [94, 141)"},
		"offset in fixed": {put16(36, 10), "HostName", 36, "HostName at offset 10 length 2"},
		"password count":  {put16(46, 0xFFF0), "Password", 44, "Password at offset 100 length 131040"},
		"change password": {func(b []byte) []byte { le.PutUint16(b[86:], 60000); le.PutUint16(b[88:], 1); return b }, "ChangePassword", 86, "ChangePassword at offset 60000"},
		"sspi long": {func(b []byte) []byte { le.PutUint16(b[80:], 0xFFFF); le.PutUint32(b[90:], 1<<30); return b },
			"SSPI", OffSSPILong, "cbSSPILong) 1073741824 exceeds"},
		"sspi long outside": {func(b []byte) []byte { le.PutUint16(b[80:], 0xFFFF); le.PutUint32(b[90:], 100); return b },
			"SSPI", 78, "SSPI at offset 120 length 100 lies outside"},
		"extension short":  {put16(58, 0), "Extension", 56, "has 0 bytes with fExtension set"},
		"feature pointer":  {func(b []byte) []byte { le.PutUint32(b[108:], 3); return b }, "FeatureExt", 108, "FeatureExt offset 3 (ibFeatureExtLong at 108)"},
		"feature past end": {func(b []byte) []byte { le.PutUint32(b[108:], 141); return b }, "FeatureExt", 108, "FeatureExt offset 141"},
		"feature too long": {func(b []byte) []byte { le.PutUint32(b[121:], 1000); return b }, "FeatureExt", 120, "entry 0x02 at 120 has 1000 data bytes, the message ends at 141"},
		"no terminator":    {func(b []byte) []byte { b[140] = 0x05; return b }, "FeatureExt", 140, "entry 0x05 at 140 truncated"},
		"cut after entry":  {func(b []byte) []byte { b = b[:140]; le.PutUint32(b, 140); return b }, "FeatureExt", 120, "at 120 has no terminator"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			msg := mutated(tc.mutate)
			_, err := Parse(msg)
			var fe *FormatError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FormatError wrapping ErrMalformed", err)
			}
			if !strings.HasPrefix(err.Error(), "login7: malformed LOGIN7: "+tc.item+" ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %q, want it to start with the item %s and hold %q", err, tc.item, tc.want)
			}
			if fe.Item != tc.item || fe.Offset != tc.offset {
				t.Fatalf("item %q at %d, want %q at %d", fe.Item, fe.Offset, tc.item, tc.offset)
			}
			var m Message
			if derr := m.Decode(msg); derr == nil || derr.Error() != err.Error() {
				t.Fatalf("Decode error %v, Parse error %v", derr, err)
			}
		})
	}
}

// TestParseTolerates: what both readings accept (see the package documentation).
func TestParseTolerates(t *testing.T) {
	le := binary.LittleEndian
	for name, mutate := range map[string]func([]byte) []byte{
		"empty field, offset past the end": func(b []byte) []byte { le.PutUint16(b[64:], 0xFFFF); return b },
		"overlapping fields":               func(b []byte) []byte { le.PutUint16(b[48:], 96); return b }, // AppName inside UserName
		"7.2 with fExtension":              func(b []byte) []byte { le.PutUint32(b[4:], 0x72090002); return b },
		"TDS 8.0":                          func(b []byte) []byte { le.PutUint32(b[4:], 0x08000000); return b },
		"long SSPI length": func(b []byte) []byte {
			le.PutUint16(b[80:], 0xFFFF)
			le.PutUint32(b[90:], 2)
			le.PutUint16(b[78:], 94)
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			var m Message
			if err := m.Decode(mutated(mutate)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestExtent(t *testing.T) {
	le := binary.LittleEndian
	l, err := Parse(vector74)
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[Field]Span{
		FieldPassword: {100, 104}, FieldDatabase: {116, 120}, FieldLanguage: {}, FieldChangePassword: {},
	} {
		if got := l.Extent(f); got != want {
			t.Errorf("Extent(%v) = %v, want %v", f, got, want)
		}
	}
	// A password whose cch counts one character outside the BMP as one: the field runs on to
	// the next field's offset.
	short := mutated(func(b []byte) []byte { le.PutUint16(b[46:], 1); return b })
	if l, err = Parse(short); err != nil {
		t.Fatal(err)
	}
	if got := l.Span(FieldPassword); got != (Span{100, 102}) {
		t.Errorf("Span(Password) = %v", got)
	}
	if got := l.Extent(FieldPassword); got != (Span{100, 104}) {
		t.Errorf("Extent(Password) = %v, want [100, 104)", got)
	}
	// The last field runs to FeatureExt, and without it to the end of the message.
	last := mutated(func(b []byte) []byte { le.PutUint16(b[70:], 1); return b }) // Database "d"
	if l, err = Parse(last); err != nil {
		t.Fatal(err)
	}
	if got := l.Extent(FieldDatabase); got != (Span{116, 120}) {
		t.Errorf("Extent(Database) = %v, want [116, 120)", got)
	}
	v71 := bytes.Clone(vector71)
	le.PutUint16(v71[46:], 1)
	if l, err = Parse(v71); err != nil {
		t.Fatal(err)
	}
	if got := l.Extent(FieldPassword); got != (Span{88, 92}) {
		t.Errorf("7.1: Extent(Password) = %v, want [88, 92)", got)
	}
}

func TestDecodeLimits(t *testing.T) {
	m := vector74Message()
	m.UserName = strings.Repeat("u", 128)
	m.AtchDBFile = strings.Repeat("f", 260)
	msg, err := m.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := back.Decode(msg); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(msg[42:], 129) // one more character, taken from Password
	err = back.Decode(msg)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "UserName has 129 characters, at most 128 allowed") {
		t.Fatalf("err = %v", err)
	}
	// Parse, the client's reading, does not judge lengths.
	if _, err := Parse(msg); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeFedAuthFeature(t *testing.T) {
	second := mutated(func(b []byte) []byte { b[134] = FeatureFedAuth; return b })
	var m Message
	err := m.Decode(second)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "FEDAUTH feature at 134 repeats") {
		t.Fatalf("err = %v", err)
	}
	unknown := mutated(func(b []byte) []byte { b[125] = 0x05 << 1; return b })
	err = m.Decode(unknown)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 125 || !strings.Contains(err.Error(), "FEDAUTH library 0x05 unknown") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Parse(unknown); err != nil {
		t.Fatalf("Parse: %v (FEDAUTH content is Decode's business)", err)
	}
}

func TestDecodeFedAuth(t *testing.T) {
	token := []byte{0x02, 0x00, 0x00, 0x00, 0x74, 0x00} // 2 bytes: "t"
	tests := map[string]struct {
		data    []byte
		want    FedAuth
		wantErr string
	}{
		"token":          {append([]byte{0x02}, token...), FedAuth{Library: FedAuthLibrarySecurityToken, Token: "t"}, ""},
		"token, nonce":   {append(append([]byte{0x03}, token...), make([]byte, 32)...), FedAuth{Library: 1, Echo: true, Token: "t", HasNonce: true}, ""},
		"ADAL":           {[]byte{0x05, 0x01}, FedAuth{Library: FedAuthLibraryADAL, Echo: true}, ""},
		"empty":          {nil, FedAuth{}, "no options byte"},
		"short length":   {[]byte{0x02, 1, 0}, FedAuth{}, "want a 4-byte length"},
		"long token":     {[]byte{0x02, 9, 0, 0, 0, 'a', 0}, FedAuth{}, "security token length 9"},
		"odd token":      {[]byte{0x02, 1, 0, 0, 0, 'a'}, FedAuth{}, "security token length 1"},
		"trailing bytes": {append(append([]byte{0x02}, token...), 1, 2, 3), FedAuth{}, "followed by 3 bytes"},
		"ADAL short":     {[]byte{0x04}, FedAuth{}, "want the workflow byte"},
		"library":        {[]byte{0x0A}, FedAuth{}, "library 0x05 unknown"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeFedAuth(tc.data)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrMalformed with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if lib, ok := FedAuthLibraryOf([]byte{0x05}); !ok || lib != FedAuthLibraryADAL {
		t.Fatalf("FedAuthLibraryOf = %d, %v", lib, ok)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := map[string]struct {
		change func(m *Message)
		want   string
	}{
		"version":            {func(m *Message) { m.TDSVersion = 0x06000000 }, "TDSVersion 0x06000000 unknown"},
		"long name":          {func(m *Message) { m.HostName = strings.Repeat("h", 129) }, "HostName has 129 characters, at most 128"},
		"7.1 change pw":      {func(m *Message) { m.TDSVersion = 0x71000001; m.Features = nil; m.ChangePassword = "x" }, "ChangePassword needs TDS 7.2"},
		"7.1 features":       {func(m *Message) { m.TDSVersion = 0x71000001 }, "FeatureExt needs TDS 7.2"},
		"7.1 long SSPI":      {func(m *Message) { m.TDSVersion = 0x71000001; m.Features = nil; m.SSPI = make([]byte, 0xFFFF) }, "SSPI of 65535 bytes needs cbSSPILong"},
		"terminator feature": {func(m *Message) { m.Features = append(m.Features, Feature{ID: 0xFF}) }, "entry 2 has the terminator's ID"},
		"offset past 64 KiB": {func(m *Message) { m.SSPI = make([]byte, 0x10000); m.AtchDBFile = "f" }, "AtchDBFile would start at byte 65656"},
		"too long":           {func(m *Message) { m.Features = append(m.Features, Feature{ID: 1, Data: make([]byte, MaxLen)}) }, "message of 131218 bytes, longer than 131072"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := vector74Message()
			tc.change(&m)
			out, err := m.Encode([]byte{1})
			if !errors.Is(err, ErrInvalidMessage) || !strings.Contains(err.Error(), tc.want) || len(out) != 1 {
				t.Fatalf("Encode = %d bytes, %v; want ErrInvalidMessage with %q", len(out), err, tc.want)
			}
		})
	}
}

// TestEncodeLongSSPI: SSPI data of 0xFFFF bytes or more goes in cbSSPILong.
func TestEncodeLongSSPI(t *testing.T) {
	m := vector74Message()
	m.SSPI = bytes.Repeat([]byte{0xAB}, 0xFFFF)
	m.UserName, m.Password = "", ""
	msg, err := m.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, long := binary.LittleEndian.Uint16(msg[80:]), binary.LittleEndian.Uint32(msg[OffSSPILong:]); n != 0xFFFF || long != 0xFFFF {
		t.Fatalf("cbSSPI %#x, cbSSPILong %#x", n, long)
	}
	var back Message
	if err := back.Decode(msg); err != nil || !bytes.Equal(back.SSPI, m.SSPI) {
		t.Fatalf("Decode: %v, %d SSPI bytes", err, len(back.SSPI))
	}
}

func TestFieldNames(t *testing.T) {
	seen := map[int]bool{}
	for f := range Field(numFields) {
		info := fields[f]
		if info.name == "" || f.String() != info.name || seen[info.at] || info.at < OffClientLCID+4 || info.at+4 > FixedLen {
			t.Errorf("field %d: %+v", f, info)
		}
		seen[info.at] = true
		var m Message
		if (m.str(f) != nil) != info.ucs2 {
			t.Errorf("%v: str and the table disagree on whether it is a string", f)
		}
	}
	if s := Field(numFields).String(); s != "Field(12)" {
		t.Errorf("String of an unknown field: %q", s)
	}
}
