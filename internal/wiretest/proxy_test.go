package wiretest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/tdsbridge/tdsbridge/tds"
)

// TestFramer: the proxy frames TDS packets and TLS records by their first byte, falls back to
// raw chunks once a unit cannot be framed, and hands a unit cut short by the end of the stream
// over as raw bytes with the error.
func TestFramer(t *testing.T) {
	tdsPkt := Packet(tds.TypePrelogin, tds.StatusEOM, []byte{1, 2, 3}, 0)
	tlsRec := []byte{0x17, 0x03, 0x03, 0x00, 0x02, 0xAA, 0xBB}
	badLen := Packet(tds.TypeTabularResult, tds.StatusEOM, nil, 4)
	tests := []struct {
		name   string
		stream []byte
		want   []Unit
		err    error
	}{
		{"tds-then-tls", append(append([]byte{}, tdsPkt...), tlsRec...),
			[]Unit{{Kind: UnitTDS, Bytes: tdsPkt}, {Kind: UnitTLS, Bytes: tlsRec}}, io.EOF},
		{"short-length-then-raw", append(append([]byte{}, badLen...), 0x01, 0x02),
			[]Unit{{Kind: UnitRaw, Bytes: badLen}, {Kind: UnitRaw, Bytes: []byte{0x01, 0x02}}}, io.EOF},
		{"cut-in-header", tdsPkt[:5], []Unit{{Kind: UnitRaw, Bytes: tdsPkt[:5]}}, io.ErrUnexpectedEOF},
		{"cut-in-body", tlsRec[:6], []Unit{{Kind: UnitRaw, Bytes: tlsRec[:6]}}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := framer{r: bytes.NewReader(tt.stream)}
			var got []Unit
			var err error
			for range 10 {
				var u Unit
				u, err = f.next()
				if len(u.Bytes) > 0 {
					got = append(got, u)
				}
				if err != nil {
					break
				}
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("ended with %v, want %v", err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d units, want %d: %v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i].Kind != tt.want[i].Kind || !bytes.Equal(got[i].Bytes, tt.want[i].Bytes) {
					t.Errorf("unit %d: %v % x, want %v % x", i, got[i].Kind, got[i].Bytes, tt.want[i].Kind, tt.want[i].Bytes)
				}
			}
		})
	}
}

// TestPasswordForms pins the LOGIN7 obfuscation (MS-TDS 2.2.6.4) the recordings look for:
// "a" is 0x61 0x00 in UTF-16LE; 0x61 swapped is 0x16, XOR 0xA5 is 0xB3; 0x00 becomes 0xA5.
func TestPasswordForms(t *testing.T) {
	plain, obf := PasswordForms("a")
	if !bytes.Equal(plain, []byte{0x61, 0x00}) || !bytes.Equal(obf, []byte{0xB3, 0xA5}) {
		t.Fatalf("PasswordForms(a) = % x, % x", plain, obf)
	}
	if !ContainsPassword([]byte{9, 0xB3, 0xA5, 9}, "a") || ContainsPassword([]byte{0xB3, 9}, "a") {
		t.Fatal("ContainsPassword")
	}
}

// TestPreloginPayload: the helper's fixed reply encodes (it returns nil only if Encode failed).
func TestPreloginPayload(t *testing.T) {
	if PreloginPayload(0x01) == nil || len(PreloginReply(0x02)) <= tds.HeaderSize {
		t.Fatal("PreloginPayload does not encode")
	}
}
