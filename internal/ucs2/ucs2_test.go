package ucs2

import (
	"bytes"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for name, tc := range map[string]struct {
		s    string
		want []byte
	}{
		"empty":          {"", nil},
		"ascii":          {"sa", []byte{'s', 0, 'a', 0}},
		"BMP":            {"é", []byte{0xE9, 0}},
		"surrogate pair": {"\U0001F600", []byte{0x3D, 0xD8, 0x00, 0xDE}},
	} {
		t.Run(name, func(t *testing.T) {
			got := Append(nil, tc.s)
			if !bytes.Equal(got, tc.want) || Len(tc.s) != len(tc.want)/2 || Decode(got) != tc.s {
				t.Fatalf("Append % x, Len %d, Decode %q", got, Len(tc.s), Decode(got))
			}
		})
	}
	if got := Decode([]byte{0x00, 0xD8}); got != "\uFFFD" {
		t.Errorf("an unpaired surrogate decodes to %q", got)
	}
	if got := Append(nil, "\xff"); !bytes.Equal(got, []byte{0xFD, 0xFF}) {
		t.Errorf("invalid UTF-8 encodes to % x", got)
	}
}
