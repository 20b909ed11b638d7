package main

import (
	"fmt"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A target (report.Target) is a goal on a per-round ratio (client CPU per byte of a candidate arm over a
// baseline, a transport arm over the floor, or MB/s of two arms), checked against what the run
// measured. Targets are reported, never enforced: the bench exits 0 whether or not one is met.
//
// The rule (judge): a target is MET only when the median of the per-round ratios meets the limit
// AND the rounds support it, over at least minVerdictRounds rounds. What "support" means depends
// on the kind:
//
//   - report.TargetGain: the candidate beat the bound in at least 75% of the rounds, or the two-sided
//     sign test of rounds better against rounds worse gives p < 0.05 with more rounds better;
//   - report.TargetNotWorse: the rounds do not show the candidate worse than the bound (more rounds
//     worse with p < 0.05 fails it).
//
// The bound is what a round must beat to count as better: 1 for a comparison of two arms (the
// candidate cheaper, or faster, than the baseline in that round), the limit itself for a
// comparison with the floor (a transport cannot beat the floor; the allowance is the limit).

// minVerdictRounds is the fewest rounds on which a target can be MET: with fewer, "75% of
// rounds" can be three of four.
const minVerdictRounds = 10

// supportShare is the share of rounds in which a gain target's candidate must beat the bound.
const supportShare = 0.75

// significance is the sign-test p-value below which the rounds count as evidence.
const significance = 0.05

// judge applies the rule of the target's kind to the per-round ratios rs (in any order). With no
// ratios it says NOT MET, "not measured".
func judge(t report.Target, rs []float64) report.Verdict {
	v := report.Verdict{Summary: stats.Summarize(rs)}
	if len(rs) == 0 {
		v.Why = "not measured"
		return v
	}
	for _, r := range rs {
		switch {
		case beats(t, r, t.Bound):
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
	if !meets(t, v.Median) {
		rel := "above"
		if t.Higher {
			rel = "below"
		}
		why = append(why, fmt.Sprintf("median %.3f %s the limit %.2f", v.Median, rel, t.Limit))
	}
	switch t.Kind {
	case report.TargetGain:
		most := float64(v.Better) >= supportShare*float64(v.N)
		significant := v.P < significance && v.Better > v.Worse
		if !most && !significant {
			test := fmt.Sprintf("sign test p=%s (>= %.2f)", report.FormatP(v.P), significance)
			if v.P < significance {
				test = fmt.Sprintf("sign test p=%s for worse", report.FormatP(v.P))
			}
			why = append(why, fmt.Sprintf("rounds do not support it: better in %d/%d (%.0f%% < %.0f%%), %s",
				v.Better, v.N, 100*float64(v.Better)/float64(v.N), 100*supportShare, test))
		}
	case report.TargetNotWorse:
		if v.Worse > v.Better && v.P < significance {
			why = append(why, fmt.Sprintf("worse in %d/%d rounds, sign test p=%s (< %.2f)", v.Worse, v.N, report.FormatP(v.P), significance))
		}
	}
	v.Met = len(why) == 0
	v.Why = strings.Join(why, "; ")
	return v
}

// meets says whether x satisfies the limit.
func meets(t report.Target, x float64) bool {
	if t.Higher {
		return x >= t.Limit
	}
	return x <= t.Limit
}

// beats says whether the ratio r is strictly better than the bound b.
func beats(t report.Target, r, b float64) bool {
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
func checkTargets(r *report.Report) []report.Target {
	var out []report.Target
	add := func(t report.Target, rs []float64) {
		if len(rs) == 0 {
			return
		}
		t.Measured = judge(t, rs)
		out = append(out, t)
	}
	for _, c := range r.CellsOf(report.GroupDriver) {
		switch {
		case c.Workload != "":
			kind := report.TargetGain
			if c.RoundTrip {
				kind = report.TargetNotWorse
			}
			for _, p := range report.DriverRatioPairs {
				add(report.Target{Name: fmt.Sprintf("%s: %s/%s, CPU per operation", c.Name, p[0], p[1]), Kind: kind, Limit: 1, Bound: 1},
					armRatios(c, p[0], p[1], report.Sample.CPUMsPerMiB))
			}
		case c.RecordSize == 0 && c.Value != "":
			if lim, ok := tlsValueLimits[c.PacketSize]; ok {
				add(report.Target{Name: fmt.Sprintf("%s: %s/%s, CPU per MiB", c.Name, report.ArmBridgedTLS, report.ArmNativeTLS), Kind: report.TargetGain, Limit: lim, Bound: 1},
					armRatios(c, report.ArmBridgedTLS, report.ArmNativeTLS, report.Sample.CPUMsPerMiB))
			}
			add(report.Target{Name: fmt.Sprintf("%s: %s/%s, CPU per MiB", c.Name, report.ArmBridgedPlain, report.ArmNativePlain), Kind: report.TargetGain, Limit: plainValueLimit, Bound: 1},
				armRatios(c, report.ArmBridgedPlain, report.ArmNativePlain, report.Sample.CPUMsPerMiB))
		}
	}
	for _, c := range r.CellsOf(report.GroupTransport) {
		for _, arm := range []string{report.ArmBridge, report.ArmBridgeCoalesce} {
			if c.Arm(arm) == nil {
				continue
			}
			add(report.Target{Name: fmt.Sprintf("transport %s: %s CPU per MB, x floor", c.Name, arm), Kind: report.TargetGain, Limit: floorLimit, Bound: floorLimit},
				floorRatios(r, c, arm))
			if c.RecordSize == transportSpeedRecordSize {
				add(report.Target{Name: fmt.Sprintf("transport %s: %s/%s MB/s", c.Name, arm, report.ArmTLSConn), Kind: report.TargetGain, Limit: speedLimit, Bound: 1, Higher: true},
					armRatios(c, arm, report.ArmTLSConn, report.Sample.MBPerSec))
			}
		}
	}
	return out
}

// worseCells returns every ratio of every cell in which the candidate was dearer than the
// baseline in more rounds than cheaper, with sign-test p < significance: what the target "no cell
// worse than native with p < 0.05" forbids. Each carries its p-value adjusted by Holm's method
// over all checked ratios (see stats.HolmAdjust), the figure to read when asking whether the run
// as a whole shows a loss: with some 35 ratios per run and nothing different, the raw rule flags
// about one of them by chance. checked is how many ratios were looked at.
func worseCells(r *report.Report) (worse []report.WorseCell, checked int) {
	var family []report.WorseCell
	var ps []float64
	for _, c := range r.Cells {
		for _, q := range c.Ratios {
			if q.N > 0 {
				family = append(family, report.WorseCell{Cell: c.Group + " " + c.Name, Ratio: q})
				ps = append(ps, q.P)
			}
		}
	}
	adj := stats.HolmAdjust(ps)
	for i, wc := range family {
		if q := wc.Ratio; q.Higher > q.Lower && q.P < significance {
			wc.HolmP = adj[i]
			worse = append(worse, wc)
		}
	}
	return worse, len(family)
}

// armRatios returns f(candidate)/f(baseline) for every round in which both arms of c have a
// sample with a positive baseline figure.
func armRatios(c *report.Cell, candidate, baseline string, f func(report.Sample) float64) []float64 {
	ca, ba := c.Arm(candidate), c.Arm(baseline)
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
// at c's record size (report.Floor: the medians of AES-128-GCM open and of the TCP read). The floor
// runs in its own group after the transport cells, so a round of it is no closer in time to a
// transport round than any other: its median is the steadier baseline.
func floorRatios(r *report.Report, c *report.Cell, arm string) []float64 {
	a := c.Arm(arm)
	f := r.Floor(c.RecordSize)
	if a == nil || f <= 0 {
		return nil
	}
	rs := make([]float64, 0, len(a.Samples))
	for _, s := range a.Samples {
		rs = append(rs, s.CPUMsPerMB()/f)
	}
	return rs
}

// byRound maps each sample's round to f of the sample.
func byRound(ss []report.Sample, f func(report.Sample) float64) map[int]float64 {
	m := make(map[int]float64, len(ss))
	for _, s := range ss {
		m[s.Round] = f(s)
	}
	return m
}
