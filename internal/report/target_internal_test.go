package report

import "testing"

// TestTargetNames: every TargetKind and Outcome reads back from the name it writes, and an
// unknown name is an error.
func TestTargetNames(t *testing.T) {
	for k := range TargetKind(len(targetKindNames)) {
		b, _ := k.MarshalText()
		var got TargetKind
		if err := got.UnmarshalText(b); err != nil || got != k {
			t.Errorf("TargetKind %q: read back %v, %v", b, got, err)
		}
	}
	for o := range Outcome(len(outcomeNames)) {
		b, _ := o.MarshalText()
		var got Outcome
		if err := got.UnmarshalText(b); err != nil || got != o {
			t.Errorf("Outcome %q: read back %v, %v", b, got, err)
		}
	}
	var o Outcome
	if err := o.UnmarshalText([]byte("met")); err == nil {
		t.Error(`Outcome "met" read without an error`)
	}
}
