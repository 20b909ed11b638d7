package login7pw

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestObfuscate(t *testing.T) {
	// MS-TDS 2.2.6.4: swap the nibbles of each byte, then XOR 0xA5. 'a' = 0x61 -> 0x16 -> 0xB3;
	// the zero high byte of each UCS-2 unit becomes 0xA5.
	got := Obfuscate([]byte{0x61, 0x00})
	if got[0] != 0xB3 || got[1] != 0xA5 {
		t.Fatalf("Obfuscate(61 00) = % x, want b3 a5", got)
	}
	for i := 0; i < 256; i++ {
		if d := Deobfuscate(Obfuscate([]byte{byte(i)})); d[0] != byte(i) {
			t.Fatalf("round trip of %#x gave %#x", i, d[0])
		}
	}
}

func TestNewSlice(t *testing.T) {
	in := []byte{1, 2, 3}
	orig := bytes.Clone(in)
	out := Obfuscate(in)
	back := Deobfuscate(out)
	if !bytes.Equal(in, orig) || !bytes.Equal(back, orig) {
		t.Fatalf("input changed to % x or round trip gave % x, want % x", in, back, orig)
	}
	out[0] ^= 0xFF
	if !bytes.Equal(back, orig) {
		t.Fatal("Deobfuscate's result shares memory with its input")
	}
}
