package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{3}, Summary{N: 1, Median: 3, P25: 3, P75: 3, Min: 3, Max: 3}},
		{"two", []float64{4, 2}, Summary{N: 2, Median: 3, P25: 2.5, P75: 3.5, Min: 2, Max: 4}},
		{"odd unsorted", []float64{5, 1, 4, 2, 3}, Summary{N: 5, Median: 3, P25: 2, P75: 4, Min: 1, Max: 5}},
		// ranks 0..7: p25 at h=1.75 -> 2+0.75*1, median at 3.5, p75 at 5.25
		{"even", []float64{1, 2, 3, 4, 5, 6, 7, 8}, Summary{N: 8, Median: 4.5, P25: 2.75, P75: 6.25, Min: 1, Max: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			got := Summarize(tt.in)
			if got != tt.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.in, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Summarize modified its input: %v, was %v", tt.in, in)
				}
			}
		})
	}
}

func TestSpread(t *testing.T) {
	small := Summarize([]float64{1, 2, 10})
	if lo, hi := small.Spread(); lo != 1 || hi != 10 {
		t.Errorf("spread of 3 values = %v-%v, want min-max 1-10", lo, hi)
	}
	big := Summarize([]float64{1, 2, 3, 4, 100})
	if lo, hi := big.Spread(); lo != 2 || hi != 4 {
		t.Errorf("spread of 5 values = %v-%v, want p25-p75 2-4", lo, hi)
	}
}

func TestSignTestP(t *testing.T) {
	tests := []struct {
		k, n int
		want float64
	}{
		{0, 0, 1},
		{5, 10, 1},
		{10, 10, 2.0 / 1024},
		{0, 10, 2.0 / 1024},
		{9, 10, 2 * 11.0 / 1024},
		{8, 10, 2 * 56.0 / 1024},
		{1, 1, 1},
		{3, 3, 0.25},
		{2, 3, 1},
	}
	for _, tt := range tests {
		if got := SignTestP(tt.k, tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("SignTestP(%d, %d) = %v, want %v", tt.k, tt.n, got, tt.want)
		}
	}
	// Large n stays finite and symmetric.
	if a, b := SignTestP(100, 1000), SignTestP(900, 1000); a != b || a <= 0 || a > 1e-100 {
		t.Errorf("SignTestP(100/900, 1000) = %v, %v: want equal, tiny and positive", a, b)
	}
}

func TestPairedRatio(t *testing.T) {
	cand := []float64{0.9, 1.8, 2.7, 4, 5.5}
	base := []float64{1, 2, 3, 4, 5}
	r := PairedRatio(cand, base)
	if r.N != 5 || r.Lower != 3 || r.Higher != 1 {
		t.Fatalf("PairedRatio = %+v: want N 5, Lower 3, Higher 1 (one tie)", r)
	}
	if math.Abs(r.Median-0.9) > 1e-12 || math.Abs(r.Min-0.9) > 1e-12 || math.Abs(r.Max-1.1) > 1e-12 {
		t.Errorf("ratios median %v min %v max %v, want 0.9, 0.9, 1.1", r.Median, r.Min, r.Max)
	}
	if want := SignTestP(3, 4); r.P != want {
		t.Errorf("P = %v, want %v", r.P, want)
	}
	// Unequal lengths pair the common prefix; a zero baseline is skipped.
	r = PairedRatio([]float64{1, 1, 1}, []float64{0, 2})
	if r.N != 1 || r.Median != 0.5 {
		t.Errorf("PairedRatio with zero baseline and short slice = %+v, want one Ratio 0.5", r)
	}
}

func TestHolmAdjust(t *testing.T) {
	tests := []struct {
		name string
		ps   []float64
		want []float64
	}{
		{"empty", nil, []float64{}},
		{"one test is not adjusted", []float64{0.03}, []float64{0.03}},
		// Sorted 0.01, 0.02, 0.04: 3*0.01, max(0.03, 2*0.02), max(0.04, 1*0.04).
		{"step-down, given out of order", []float64{0.04, 0.01, 0.02}, []float64{0.04, 0.03, 0.04}},
		// The running maximum keeps the adjusted values in the order of the raw ones.
		{"monotone", []float64{0.01, 0.011, 0.5}, []float64{0.03, 0.03, 0.5}},
		{"capped at 1", []float64{0.6, 0.7}, []float64{1, 1}},
		// 35 ratios, one at p = 0.017 (a "worse" cell of a real run): not significant for the family.
		{"one low p among many", append([]float64{0.017}, repeat(0.5, 34)...), append([]float64{0.595}, repeat(1, 34)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HolmAdjust(tt.ps)
			if len(got) != len(tt.want) {
				t.Fatalf("HolmAdjust(%v) = %v, want %v", tt.ps, got, tt.want)
			}
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Fatalf("HolmAdjust(%v) = %v, want %v", tt.ps, got, tt.want)
				}
			}
		})
	}
}

func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
