package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A target (report.Target) is a goal on a per-round ratio (client CPU per byte, or read system
// calls per MiB, of a candidate arm over a baseline), checked against what the run measured.
// Targets are reported, never enforced: the bench exits 0 whether or not one is met.
//
// The rule (judge): a target is MET only when the median of the per-round ratios meets the limit
// AND the rounds support it, over at least minVerdictRounds rounds. What "support" means depends
// on the kind:
//
//   - report.TargetGain: the candidate beat the bound in at least 75% of the rounds, or the two-sided
//     sign test of rounds better against rounds worse gives p < 0.05 with more rounds better;
//   - report.TargetNotWorse: the rounds do not show the candidate worse than the bound (more rounds
//     worse with p < 0.05 fails it);
//   - report.TargetNotWorseRun: the same, with the p-value adjusted by Holm's method over every
//     ratio of the run (worseCells), so that a loss must stand for the run as a whole.
//
// The bound is what a round must beat to count as better: 1 for a comparison of two arms' CPU
// (the candidate cheaper in that round), the limit itself for the read system calls (a round
// counts when the bridge made at most a third of go-mssqldb's reads).
//
// What is no longer a target, because it is decided: with crypto/tls decrypting, a TLS read costs
// what go-mssqldb's own transport costs (the transport-only cells show a plain tls.Conn within a
// fifth of the floor at 16 KiB records), so TLS reads are held to "never worse than native" and
// to a third of native's read system calls, not to a gain in CPU; the transport-only cells have
// no targets of their own and are held by the guard (no cell worse than its baseline).

// minVerdictRounds is the fewest rounds on which a target can be MET: with fewer, "75% of
// rounds" can be three of four.
const minVerdictRounds = 10

// supportShare is the share of rounds in which a gain target's candidate must beat the bound.
const supportShare = 0.75

// significance is the sign-test p-value below which the rounds count as evidence.
const significance = 0.05

// judge applies the rule of the target's kind to the per-round ratios rs (in any order); holmP
// is the Holm-adjusted p-value of the cell's ratio, which only report.TargetNotWorseRun reads.
// With no ratios it says NOT MET, "not measured".
func judge(t report.Target, rs []float64, holmP float64) report.Verdict {
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
	case report.TargetNotWorseRun:
		v.HolmP = holmP
		if v.Worse > v.Better && holmP < significance {
			why = append(why, fmt.Sprintf("worse in %d/%d rounds, Holm-adjusted p=%s (< %.2f)", v.Worse, v.N, report.FormatP(holmP), significance))
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

// Limits: bridged plain over native plain client CPU per MiB in the value cells, and bridged TLS
// over native TLS read system calls per MiB.
const (
	plainValueLimit = 0.90
	tlsReadsLimit   = 1.0 / 3
)

// checkTargets evaluates every target whose cells the report measured:
//
//   - driver value cells (recordSize 0): TLS bridged/native client CPU not worse (Holm-adjusted)
//     and read system calls at most a third of native's; plaintext bridged/native CPU <= 0.90, a
//     gain;
//   - workload cells, bridged/native CPU per operation: round trips not worse; the many-row
//     cells, which read, under TLS not worse (Holm-adjusted) and in plaintext a gain below 1.00;
//     uploads and CopyIn, which write, a gain below 1.00 with and without TLS;
//   - every ratio of every cell: none worse with p < 0.05 (the guard, worseCells, reported apart).
func checkTargets(r *report.Report) []report.Target {
	holm := map[string]float64{}
	for _, wc := range ratioFamily(r) {
		holm[ratioKey(wc.Cell, wc.Ratio.Candidate, wc.Ratio.Baseline)] = wc.HolmP
	}
	var out []report.Target
	add := func(c *report.Cell, t report.Target, rs []float64, candidate, baseline string) {
		if len(rs) == 0 {
			return
		}
		h, ok := holm[ratioKey(c.Group+" "+c.Name, candidate, baseline)]
		if !ok {
			h = 1
		}
		t.Measured = judge(t, rs, h)
		out = append(out, t)
	}
	cpu := func(c *report.Cell, name string, kind report.TargetKind, limit float64, candidate, baseline string) {
		add(c, report.Target{Name: fmt.Sprintf("%s: %s/%s, %s", c.Name, candidate, baseline, name), Kind: kind, Limit: limit, Bound: 1},
			armRatios(c, candidate, baseline, report.Sample.CPUMsPerMiB), candidate, baseline)
	}
	for _, c := range r.CellsOf(report.GroupDriver) {
		switch {
		case c.Workload != "":
			tlsKind, plainKind := report.TargetGain, report.TargetGain
			switch {
			case c.RoundTrip:
				tlsKind, plainKind = report.TargetNotWorse, report.TargetNotWorse
			case reads(c):
				tlsKind = report.TargetNotWorseRun
			}
			cpu(c, "CPU per operation", tlsKind, 1, report.ArmBridgedTLS, report.ArmNativeTLS)
			cpu(c, "CPU per operation", plainKind, 1, report.ArmBridgedPlain, report.ArmNativePlain)
		case c.RecordSize == 0 && c.Value != "":
			cpu(c, "CPU per MiB", report.TargetNotWorseRun, 1, report.ArmBridgedTLS, report.ArmNativeTLS)
			add(c, report.Target{Name: fmt.Sprintf("%s: %s/%s, read system calls per MiB", c.Name, report.ArmBridgedTLS, report.ArmNativeTLS),
				Kind: report.TargetGain, Limit: tlsReadsLimit, Bound: tlsReadsLimit},
				armRatios(c, report.ArmBridgedTLS, report.ArmNativeTLS, report.Sample.ReadsPerMiB), "", "")
			cpu(c, "CPU per MiB", report.TargetGain, plainValueLimit, report.ArmBridgedPlain, report.ArmNativePlain)
		}
	}
	return out
}

// reads says whether a workload cell's traffic is what it receives (the many-row cells), as its
// byte count says (see byteCount in workloadcells.go: "... received", "... sent", "...
// sent+received").
func reads(c *report.Cell) bool {
	return strings.HasSuffix(c.Counted, " received")
}

// ratioFamily returns every ratio of every cell that has rounds, each with its sign-test p-value
// adjusted by Holm's method over all of them (see stats.HolmAdjust): the family the guard and
// the Holm-adjusted targets are judged in.
func ratioFamily(r *report.Report) []report.WorseCell {
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
	for i, p := range stats.HolmAdjust(ps) {
		family[i].HolmP = p
	}
	return family
}

// ratioKey names a ratio of the family: the cell's group and name, candidate and baseline.
func ratioKey(cell, candidate, baseline string) string {
	return cell + "\x00" + candidate + "\x00" + baseline
}

// worseCells returns every ratio of every cell in which the candidate was dearer than the
// baseline in more rounds than cheaper, with sign-test p < significance: what the guard "no cell
// worse than its baseline with p < 0.05" forbids. Each carries its p-value adjusted by Holm's
// method over all checked ratios, the figure to read when asking whether the run as a whole shows
// a loss: with some 30 ratios per run and nothing different, the raw rule flags about one of them
// by chance. checked is how many ratios were looked at.
func worseCells(r *report.Report) (worse []report.WorseCell, checked int) {
	family := ratioFamily(r)
	for _, wc := range family {
		if q := wc.Ratio; q.Higher > q.Lower && q.P < significance {
			worse = append(worse, wc)
		}
	}
	return worse, len(family)
}

// armRatios returns f(candidate)/f(baseline) for every round in which both arms of c have a
// sample with a positive baseline figure and a known candidate figure (read system calls are
// NaN where the system does not count them).
func armRatios(c *report.Cell, candidate, baseline string, f func(report.Sample) float64) []float64 {
	ca, ba := c.Arm(candidate), c.Arm(baseline)
	if ca == nil || ba == nil {
		return nil
	}
	base := byRound(ba.Samples, f)
	var rs []float64
	for _, s := range ca.Samples {
		if b, ok := base[s.Round]; ok && b > 0 && !math.IsNaN(f(s)) {
			rs = append(rs, f(s)/b)
		}
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
