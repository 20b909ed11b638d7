// Package stats holds the statistics of the bench program (bench/README.md describes the
// method): the summary of a set of per-round values (median, quartiles, extremes) and the
// comparison of two arms over paired rounds (per-round ratios and an exact two-sided sign test),
// and Holm's correction for a family of such tests.
package stats

import (
	"math"
	"sort"
)

// Summary describes a set of per-round values: the median and the spread.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P25    float64 `json:"p25"`
	P75    float64 `json:"p75"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// MinQuartileN is the smallest number of values for which the table shows p25-p75 as the spread;
// below it the spread shown is min-max (quartiles of three values say little).
const MinQuartileN = 5

// spread returns the interval the table shows next to the median: p25-p75, or min-max for fewer
// than MinQuartileN values.
func (s Summary) Spread() (lo, hi float64) {
	if s.N < MinQuartileN {
		return s.Min, s.Max
	}
	return s.P25, s.P75
}

// Summarize computes the summary of xs; xs is not modified. An empty xs gives a zero Summary
// with N == 0.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return Summary{
		N:      len(s),
		Median: Quantile(s, 0.5),
		P25:    Quantile(s, 0.25),
		P75:    Quantile(s, 0.75),
		Min:    s[0],
		Max:    s[len(s)-1],
	}
}

// Quantile returns the q-quantile (0 <= q <= 1) of sorted, a non-empty ascending slice, with
// linear interpolation between closest ranks (the usual "type 7" definition).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// Ratio compares a candidate arm with a baseline over paired rounds: round i of one against
// round i of the other.
type Ratio struct {
	Summary         // of the per-round ratios candidate/baseline
	Lower   int     `json:"lower"` // rounds in which the candidate was lower (cheaper)
	Higher  int     `json:"higher"`
	P       float64 `json:"sign_test_p"` // two-sided exact sign test of Lower against Higher
}

// PairedRatio computes the ratio candidate[i]/baseline[i] for each i below the shorter length
// (pairs with a non-positive baseline are skipped) and summarizes them. Ties count in neither
// direction, as a sign test wants.
func PairedRatio(candidate, baseline []float64) Ratio {
	n := min(len(candidate), len(baseline))
	rs := make([]float64, 0, n)
	var r Ratio
	for i := 0; i < n; i++ {
		if baseline[i] <= 0 {
			continue
		}
		rs = append(rs, candidate[i]/baseline[i])
		switch {
		case candidate[i] < baseline[i]:
			r.Lower++
		case candidate[i] > baseline[i]:
			r.Higher++
		}
	}
	r.Summary = Summarize(rs)
	r.P = SignTestP(r.Lower, r.Lower+r.Higher)
	return r
}

// SignTestP returns the two-sided p-value of an exact binomial sign test: the probability, with
// n fair coin flips, of a split at least as uneven as k against n-k. n == 0 gives 1.
func SignTestP(k, n int) float64 {
	if n <= 0 {
		return 1
	}
	m := min(k, n-k)
	// P(X <= m) for X ~ Binomial(n, 1/2), summed in log space to stay finite for large n.
	var tail float64
	for i := 0; i <= m; i++ {
		tail += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	p := 2 * tail
	if 2*m == n { // the middle term was counted for both tails
		p -= math.Exp(logChoose(n, m) - float64(n)*math.Ln2)
	}
	return math.Min(p, 1)
}

// logChoose returns ln(n choose k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// HolmAdjust returns Holm's step-down adjusted p-values of the family ps, in ps's order: with
// the family sorted ascending, the i-th smallest (from 0) becomes the largest of (m-j)*p_j over
// j <= i, capped at 1, where m is the family's size. A test whose adjusted p-value is below
// alpha stays significant with the chance of any false finding in the whole family held to
// alpha, however many tests it has and whether or not they are independent.
func HolmAdjust(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]] < ps[order[b]] })
	adj := make([]float64, m)
	running := 0.0
	for i, k := range order {
		running = math.Max(running, math.Min(1, float64(m-i)*ps[k]))
		adj[k] = running
	}
	return adj
}
