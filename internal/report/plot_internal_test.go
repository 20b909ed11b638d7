package report

import "testing"

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{0.7, 1}, {1.2, 2}, {3, 5}, {0.031, 0.05}, {60, 100}, {0, 1}} {
		if got := niceStep(tt.in); got < tt.want*0.999999 || got > tt.want*1.000001 {
			t.Errorf("niceStep(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
