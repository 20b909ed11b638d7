package cputime

import (
	"testing"
	"time"
)

// TestProcessCountsWork checks that the clock moves when the process burns CPU: a busy loop of
// at least 50 ms of wall time must add CPU time, and the clock never runs backwards.
func TestProcessCountsWork(t *testing.T) {
	before, err := Process()
	if err != nil {
		t.Fatalf("Process: %v", err)
	}
	x := uint64(1)
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	after, err := Process()
	if err != nil {
		t.Fatalf("Process: %v", err)
	}
	if after <= before {
		t.Fatalf("CPU time did not advance over a busy loop: before %v, after %v (x=%d)", before, after, x)
	}
}
