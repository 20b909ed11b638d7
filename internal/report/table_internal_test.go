package report

import (
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

func TestFmt(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{{0.123, "0.12"}, {3.14159, "3.14"}, {12.34, "12.3"}, {1234.5, "1234"}, {0, "0.00"}} {
		if got := fmtNum(tt.x); got != tt.want {
			t.Errorf("fmtNum(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
	for _, tt := range []struct {
		p    float64
		want string
	}{{1, "1"}, {0.0625, "0.062"}, {0.5, "0.5"}, {0.0004, "<0.001"}} {
		if got := FormatP(tt.p); got != tt.want {
			t.Errorf("FormatP(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
	if got := fmtStat(stats.Summary{}); got != "-" {
		t.Errorf("fmtStat(empty) = %q, want -", got)
	}
	if got := fmtRatio(nil); got != "-" {
		t.Errorf("fmtRatio(nil) = %q, want -", got)
	}
}
