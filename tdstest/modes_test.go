package tdstest

import (
	"testing"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// TestModesCoverEveryMode: Modes has one entry per prelogin.Mode, in order, each with a
// setting and an encrypt value of its own.
func TestModesCoverEveryMode(t *testing.T) {
	ms := Modes()
	n := 0
	for m := prelogin.Mode(0); m.Valid(); m++ {
		n++
	}
	if len(ms) != n {
		t.Fatalf("Modes has %d entries for %d prelogin modes", len(ms), n)
	}
	encrypts := map[string]bool{}
	for i, m := range ms {
		if want := prelogin.Mode(i).String(); m.Name != want {
			t.Errorf("Modes()[%d].Name = %q, want %q", i, m.Name, want)
		}
		if m.Encrypt == "" || encrypts[m.Encrypt] {
			t.Errorf("%s: encrypt value %q missing or repeated", m.Name, m.Encrypt)
		}
		encrypts[m.Encrypt] = true
	}
}
