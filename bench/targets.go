package main

import (
	"fmt"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A target is a goal on a per-round ratio (client CPU per byte of a candidate arm over a
// baseline, a transport arm over the floor, or MB/s of two arms), checked against what the run
// measured. Targets are reported, never enforced: the bench exits 0 whether or not one is met.
//
// The rule (judge): a target is MET only when the median of the per-round ratios meets the limit
// AND the rounds support it, over at least minVerdictRounds rounds. What "support" means depends
// on the kind:
//
//   - targetGain: the candidate beat the bound in at least 75% of the rounds, or the two-sided
//     sign test of rounds better against rounds worse gives p < 0.05 with more rounds better;
//   - targetNotWorse: the rounds do not show the candidate worse than the bound (more rounds
//     worse with p < 0.05 fails it).
//
// The bound is what a round must beat to count as better: 1 for a comparison of two arms (the
// candidate cheaper, or faster, than the baseline in that round), the limit itself for a
// comparison with the floor (a transport cannot beat the floor; the allowance is the limit).
type target struct {
	Name     string     `json:"name"` // what the target is, e.g. "TLS, varbinary/4096: bridged/native CPU per MiB"
	Kind     targetKind `json:"kind"`
	Limit    float64    `json:"limit"`
	Bound    float64    `json:"bound"`         // a round counts as better when its ratio beats this
	Higher   bool       `json:"higher_better"` // the ratio must be at least Limit (MB/s); else at most
	Measured verdict    `json:"measured"`
}

// targetKind says what kind of support a target asks of the rounds (see target).
type targetKind uint8

const (
	targetGain     targetKind = iota // a gain: most rounds better, or a significant sign test
	targetNotWorse                   // no loss: the rounds do not show the candidate worse
)

// String names the kind as the table prints it.
func (k targetKind) String() string {
	switch k {
	case targetGain:
		return "gain"
	case targetNotWorse:
		return "not worse"
	default:
		return fmt.Sprintf("targetKind(%d)", uint8(k))
	}
}

// MarshalText makes the JSON output carry the kind's name.
func (k targetKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name back.
func (k *targetKind) UnmarshalText(b []byte) error {
	for _, c := range []targetKind{targetGain, targetNotWorse} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("bench: unknown target kind %q", b)
}

// verdict is what the rounds say about one target.
type verdict struct {
	stats.Summary         // of the per-round ratios
	Better        int     `json:"better"` // rounds whose ratio beat the bound
	Worse         int     `json:"worse"`  // rounds whose ratio was on the wrong side of the bound
	P             float64 `json:"sign_test_p"`
	Met           bool    `json:"met"`
	Why           string  `json:"why,omitempty"` // which condition failed, when not met
}

// minVerdictRounds is the fewest rounds on which a target can be MET: with fewer, "75% of
// rounds" can be three of four.
const minVerdictRounds = 10

// supportShare is the share of rounds in which a gain target's candidate must beat the bound.
const supportShare = 0.75

// significance is the sign-test p-value below which the rounds count as evidence.
const significance = 0.05

// judge applies the rule of the target's kind to the per-round ratios rs (in any order). With no
// ratios it says NOT MET, "not measured".
func (t target) judge(rs []float64) verdict {
	v := verdict{Summary: stats.Summarize(rs)}
	if len(rs) == 0 {
		v.Why = "not measured"
		return v
	}
	for _, r := range rs {
		switch {
		case t.beats(r, t.Bound):
			v.Better++
		case r != t.Bound:
			v.Worse++
		}
	}
	v.P = stats.SignTestP(v.Better, v.Better+v.Worse)
	var why []string
	if v.N < minVerdictRounds {
		why = append(why, fmt.Sprintf("too few rounds (%d < %d) for a verdict", v.N, minVerdictRounds))
	}
	if !t.meets(v.Median) {
		rel := "above"
		if t.Higher {
			rel = "below"
		}
		why = append(why, fmt.Sprintf("median %.3f %s the limit %.2f", v.Median, rel, t.Limit))
	}
	switch t.Kind {
	case targetGain:
		most := float64(v.Better) >= supportShare*float64(v.N)
		significant := v.P < significance && v.Better > v.Worse
		if !most && !significant {
			test := fmt.Sprintf("sign test p=%s (>= %.2f)", fmtP(v.P), significance)
			if v.P < significance {
				test = fmt.Sprintf("sign test p=%s for worse", fmtP(v.P))
			}
			why = append(why, fmt.Sprintf("rounds do not support it: better in %d/%d (%.0f%% < %.0f%%), %s",
				v.Better, v.N, 100*float64(v.Better)/float64(v.N), 100*supportShare, test))
		}
	case targetNotWorse:
		if v.Worse > v.Better && v.P < significance {
			why = append(why, fmt.Sprintf("worse in %d/%d rounds, sign test p=%s (< %.2f)", v.Worse, v.N, fmtP(v.P), significance))
		}
	}
	v.Met = len(why) == 0
	v.Why = strings.Join(why, "; ")
	return v
}

// meets says whether x satisfies the limit.
func (t target) meets(x float64) bool {
	if t.Higher {
		return x >= t.Limit
	}
	return x <= t.Limit
}

// beats says whether the ratio r is strictly better than the bound b.
func (t target) beats(r, b float64) bool {
	if t.Higher {
		return r > b
	}
	return r < b
}

// Limits of the driver value cells: bridged TLS over native TLS, client CPU per MiB, by packet
// size; bridged plain over native plain at every packet size.
var (
	tlsValueLimits  = map[int]float64{4096: 0.88, 16384: 0.95}
	plainValueLimit = 0.90
)

// Limits of the transport-only cells: the bridge's CPU per MB over the floor at every record
// size, and its MB/s over tls.Conn's at transportSpeedRecordSize.
const (
	floorLimit               = 1.15
	speedLimit               = 1.10
	transportSpeedRecordSize = 16 << 10
)

// checkTargets evaluates every target whose cells the report measured:
//
//   - driver value cells (recordSize 0): TLS bridged/native <= 0.88 at packet size 4096 and
//     <= 0.95 at 16384, plaintext bridged/native <= 0.90, each a gain;
//   - workload cells: bridged/native <= 1.00, a gain where a query moves many packets, not worse
//     for round trips;
//   - transport cells: the bridge at most floorLimit x the floor, and at 16 KiB records at least
//     speedLimit x tls.Conn's MB/s, each a gain;
//   - every ratio of every cell: none worse with p < 0.05 (noWorseCell, reported apart).
func checkTargets(r *report) []target {
	var out []target
	add := func(t target, rs []float64) {
		if len(rs) == 0 {
			return
		}
		t.Measured = t.judge(rs)
		out = append(out, t)
	}
	for _, c := range r.cellsOf(groupDriver) {
		switch {
		case c.Workload != "":
			kind := targetGain
			if c.RoundTrip {
				kind = targetNotWorse
			}
			for _, p := range driverRatioPairs {
				add(target{Name: fmt.Sprintf("%s: %s/%s, CPU per operation", c.Name, p[0], p[1]), Kind: kind, Limit: 1, Bound: 1},
					armRatios(c, p[0], p[1], sample.cpuMsPerMiB))
			}
		case c.RecordSize == 0 && c.Value != "":
			if lim, ok := tlsValueLimits[c.PacketSize]; ok {
				add(target{Name: fmt.Sprintf("%s: %s/%s, CPU per MiB", c.Name, armBridgedTLS, armNativeTLS), Kind: targetGain, Limit: lim, Bound: 1},
					armRatios(c, armBridgedTLS, armNativeTLS, sample.cpuMsPerMiB))
			}
			add(target{Name: fmt.Sprintf("%s: %s/%s, CPU per MiB", c.Name, armBridgedPlain, armNativePlain), Kind: targetGain, Limit: plainValueLimit, Bound: 1},
				armRatios(c, armBridgedPlain, armNativePlain, sample.cpuMsPerMiB))
		}
	}
	for _, c := range r.cellsOf(groupTransport) {
		for _, arm := range []string{armBridge, armBridgeDirect} {
			if c.arm(arm) == nil {
				continue
			}
			add(target{Name: fmt.Sprintf("transport %s: %s CPU per MB, x floor", c.Name, arm), Kind: targetGain, Limit: floorLimit, Bound: floorLimit},
				floorRatios(r, c, arm))
			if c.RecordSize == transportSpeedRecordSize {
				add(target{Name: fmt.Sprintf("transport %s: %s/%s MB/s", c.Name, arm, armTLSConn), Kind: targetGain, Limit: speedLimit, Bound: 1, Higher: true},
					armRatios(c, arm, armTLSConn, sample.mbPerSec))
			}
		}
	}
	return out
}

// worseCell is a ratio of the table that shows the candidate significantly worse.
type worseCell struct {
	Cell  string      `json:"cell"`
	Ratio ratioResult `json:"ratio"`
}

// worseCells returns every ratio of every cell in which the candidate was dearer than the
// baseline in more rounds than cheaper, with sign-test p < significance: what the target "no cell
// worse than native with p < 0.05" forbids.
func worseCells(r *report) []worseCell {
	var out []worseCell
	for _, c := range r.Cells {
		for _, q := range c.Ratios {
			if q.N > 0 && q.Higher > q.Lower && q.P < significance {
				out = append(out, worseCell{Cell: c.Group + " " + c.Name, Ratio: q})
			}
		}
	}
	return out
}

// ratiosChecked counts the ratios worseCells looked at.
func ratiosChecked(r *report) int {
	n := 0
	for _, c := range r.Cells {
		for _, q := range c.Ratios {
			if q.N > 0 {
				n++
			}
		}
	}
	return n
}

// armRatios returns f(candidate)/f(baseline) for every round in which both arms of c have a
// sample with a positive baseline figure.
func armRatios(c *cellResult, candidate, baseline string, f func(sample) float64) []float64 {
	ca, ba := c.arm(candidate), c.arm(baseline)
	if ca == nil || ba == nil {
		return nil
	}
	base := byRound(ba.Samples, f)
	var rs []float64
	for _, s := range ca.Samples {
		if b, ok := base[s.Round]; ok && b > 0 {
			rs = append(rs, f(s)/b)
		}
	}
	return rs
}

// floorRatios returns, for every round, the arm's CPU per MB in transport cell c over the floor
// at c's record size (floorFor: the medians of AES-128-GCM open and of the TCP read). The floor
// runs in its own group after the transport cells, so a round of it is no closer in time to a
// transport round than any other: its median is the steadier baseline.
func floorRatios(r *report, c *cellResult, arm string) []float64 {
	a := c.arm(arm)
	f := floorFor(r, c.RecordSize)
	if a == nil || f <= 0 {
		return nil
	}
	rs := make([]float64, 0, len(a.Samples))
	for _, s := range a.Samples {
		rs = append(rs, s.cpuMsPerMB()/f)
	}
	return rs
}

// byRound maps each sample's round to f of the sample.
func byRound(ss []sample, f func(sample) float64) map[int]float64 {
	m := make(map[int]float64, len(ss))
	for _, s := range ss {
		m[s.Round] = f(s)
	}
	return m
}
