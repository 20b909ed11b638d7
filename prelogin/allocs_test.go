//go:build !race

package prelogin

import "testing"

// TestZeroAllocs checks the steady-state allocation claims of the doc comments. (The race
// detector changes allocation counts, so this file is built without it.)
func TestZeroAllocs(t *testing.T) {
	payloads := [][]byte{clientVector, server2008Vector, fullClientVector}
	big, err := largeMessage(16384).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	payloads = append(payloads, big)
	var m Message
	buf := make([]byte, 0, 64)
	// Warm up: grow the Message's storage and the buffer to the largest payload.
	for _, p := range payloads {
		if err := m.Decode(p); err != nil {
			t.Fatal(err)
		}
		if buf, err = m.Encode(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range payloads {
		if n := testing.AllocsPerRun(100, func() { _ = m.Decode(p) }); n != 0 {
			t.Errorf("Decode of %d bytes into a reused Message: %v allocs, want 0", len(p), n)
		}
		_ = m.Decode(p)
		if n := testing.AllocsPerRun(100, func() { buf, _ = m.Encode(buf[:0]) }); n != 0 {
			t.Errorf("Encode of %d bytes into a reused buffer: %v allocs, want 0", len(p), n)
		}
		q := clone(p)
		if n := testing.AllocsPerRun(100, func() { _, _ = SetEncryption(q, EncryptOn) }); n != 0 {
			t.Errorf("SetEncryption on %d bytes: %v allocs, want 0", len(p), n)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = EncryptionOf(q) }); n != 0 {
			t.Errorf("EncryptionOf on %d bytes: %v allocs, want 0", len(p), n)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = SetReplyEncryption(q, EncryptOn) }); n != 0 {
			t.Errorf("SetReplyEncryption on %d bytes: %v allocs, want 0", len(p), n)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = ReplyEncryptionOf(q) }); n != 0 {
			t.Errorf("ReplyEncryptionOf on %d bytes: %v allocs, want 0", len(p), n)
		}
	}
	bf := babelfish(nil) // a reply Decode refuses
	if n := testing.AllocsPerRun(100, func() { _, _ = SetReplyEncryption(bf, EncryptOn) }); n != 0 {
		t.Errorf("SetReplyEncryption on Babelfish's reply: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ClientOutcome(EncryptOn, EncryptReq) }); n != 0 {
		t.Errorf("ClientOutcome: %v allocs, want 0", n)
	}
}
