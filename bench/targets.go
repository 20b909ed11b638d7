package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A target (report.Target) is a decided goal on one ratio of a cell, checked against what the
// run measured; targets are reported, never enforced. A target does not judge its ratio itself:
// it reads the standing that judge gave the ratio for the verdict (judgeRun), so that the
// Targets section and the verdict cannot disagree (outcome):
//
//   - not worse (report.TargetNotWorse): MET unless the verdict lists the ratio under "makes
//     worse" (dearer with Holm-adjusted p < significance over every judged ratio of the run);
//     the median has no limit, so a median of 1.006 with half the rounds cheaper is MET;
//   - gain (report.TargetGain): MET when the verdict lists the ratio under "saves" against the
//     target's bound (see judge) and the median is at or below the limit;
//   - with fewer than minVerdictRounds rounds: not judged, as the verdict says "too few rounds".
//
// The goals (checkTargets; bench/README.md, "Targets"): with TLS, the bridge is never dearer
// than go-mssqldb's own transport, and at packet size 4096 makes at most readsLimit of its read
// system calls; in plaintext it saves (value cells at most plainValueLimit; many-row cells,
// uploads and CopyIn below 1). What is decided, and no longer a goal: a TLS read costs what
// crypto/tls costs, whoever feeds it records, so TLS reads are held to "not worse", not to a gain.

// minVerdictRounds is the fewest rounds on which a ratio is judged: with fewer, "75% of rounds"
// can be three of four.
const minVerdictRounds = 10

// supportShare is the share of rounds in which a candidate must beat the bound to count as
// cheaper without a significant sign test.
const supportShare = 0.75

// significance is the p-value below which the rounds count as evidence.
const significance = 0.05

// Limits of the gain targets: bridged plain over native plain client CPU per MiB in the value
// cells, and bridged TLS over native TLS read system calls per MiB at readsPacketSize (its
// bound too: a round counts when the bridge made less than that share of native's reads).
const (
	plainValueLimit = 0.90
	readsLimit      = 0.60
	readsPacketSize = 4096
)

// Measures of a ratio, as the verdict names them.
const (
	measureCPU   = "client CPU"
	measureReads = "read system calls"
)

// checkTargets returns every target whose ratio the report measured:
//
//   - driver value cells (recordSize 0, fresh-process cells included): TLS client CPU not worse;
//     at packet size readsPacketSize, TLS read system calls at most readsLimit of native's;
//     plaintext client CPU at most plainValueLimit, a gain;
//   - workload cells, client CPU per operation: round trips not worse, TLS and plaintext; the
//     many-row cells, which read, not worse with TLS and a gain below 1 in plaintext; uploads
//     and CopyIn, which write, a gain below 1 with and without TLS.
//
// The guard, no judged ratio dearer for the run as a whole, is reported apart (worseCells).
func checkTargets(r *report.Report) []report.Target {
	judged := map[string]judgedRatio{}
	for _, j := range judgeRun(r) {
		judged[j.key()] = j
	}
	var out []report.Target
	cpu := func(c *report.Cell, per string, kind report.TargetKind, limit float64, candidate, baseline string) {
		j, ok := judged[ratioKey(c, measureCPU, candidate, baseline)]
		if !ok {
			return
		}
		t := newTarget(c, fmt.Sprintf("CPU per %s", per), measureCPU, kind, limit, 1, candidate, baseline)
		t.Measured = outcome(t, j.standing, j.ratio.Ratio, j.holmP)
		out = append(out, t)
	}
	for _, c := range r.CellsOf(report.GroupDriver) {
		switch {
		case c.Workload != "":
			tlsKind, plainKind := report.TargetGain, report.TargetGain
			switch {
			case c.RoundTrip:
				tlsKind, plainKind = report.TargetNotWorse, report.TargetNotWorse
			case reads(c):
				tlsKind = report.TargetNotWorse
			}
			cpu(c, "operation", tlsKind, 1, report.ArmBridgedTLS, report.ArmNativeTLS)
			cpu(c, "operation", plainKind, 1, report.ArmBridgedPlain, report.ArmNativePlain)
		case c.RecordSize == 0 && c.Value != "":
			cpu(c, "MiB", report.TargetNotWorse, 1, report.ArmBridgedTLS, report.ArmNativeTLS)
			if c.PacketSize == readsPacketSize {
				if rs := armRatios(c, report.ArmBridgedTLS, report.ArmNativeTLS, report.Sample.ReadsPerMiB); len(rs) > 0 {
					t := newTarget(c, "read system calls per MiB", measureReads, report.TargetGain, readsLimit, readsLimit, report.ArmBridgedTLS, report.ArmNativeTLS)
					q := roundsAgainst(rs, readsLimit)
					t.Measured = outcome(t, judge(q, readsLimit, 1), q, 1)
					out = append(out, t)
				}
			}
			cpu(c, "MiB", report.TargetGain, plainValueLimit, report.ArmBridgedPlain, report.ArmNativePlain)
		}
	}
	return out
}

// newTarget makes a target on the ratio candidate/baseline of measure in c; what names the
// figure in the target's name ("CPU per MiB").
func newTarget(c *report.Cell, what, measure string, kind report.TargetKind, limit, bound float64, candidate, baseline string) report.Target {
	if kind == report.TargetNotWorse {
		limit = 0 // no limit on the median
	}
	return report.Target{
		Name: fmt.Sprintf("%s: %s/%s, %s", c.Name, candidate, baseline, what),
		Kind: kind, Cell: c.Name, Arms: armsLabel(candidate, baseline), Measure: measure,
		Limit: limit, Bound: bound,
	}
}

// outcome reads a target's outcome from the standing s that judge gave its ratio q (rounds
// counted against the target's bound; holmP its Holm-adjusted p-value). It is MET exactly
// when s is what the target asks: for TargetNotWorse anything but dearer, for TargetGain
// cheaper with the median at or below the limit; not judged when s is fewRounds.
func outcome(t report.Target, s standing, q stats.Ratio, holmP float64) report.Verdict {
	v := report.Verdict{Summary: q.Summary, Better: q.Lower, Worse: q.Higher, P: q.P}
	var why []string
	switch t.Kind {
	case report.TargetNotWorse:
		v.HolmP = holmP
		if s == dearer {
			why = append(why, fmt.Sprintf("dearer in %d/%d rounds, Holm-adjusted p=%s (< %.2f)", q.Higher, q.N, report.FormatP(holmP), significance))
		}
	case report.TargetGain:
		if !supportsGain(q) {
			test := fmt.Sprintf("sign test p=%s (>= %.2f)", report.FormatP(q.P), significance)
			if q.P < significance {
				test = fmt.Sprintf("sign test p=%s for worse", report.FormatP(q.P))
			}
			why = append(why, fmt.Sprintf("rounds do not show it: better in %d/%d (%.0f%% < %.0f%%), %s",
				q.Lower, q.N, 100*float64(q.Lower)/float64(q.N), 100*supportShare, test))
		}
		switch {
		case q.Median > t.Limit:
			why = append(why, fmt.Sprintf("median %.3f above the limit %.2f", q.Median, t.Limit))
		case s != cheaper && supportsGain(q):
			why = append(why, fmt.Sprintf("median %.3f not below %.2f", q.Median, t.Bound))
		}
	default:
		why = append(why, fmt.Sprintf("unknown kind %v", t.Kind))
	}
	switch {
	case s == fewRounds:
		v.Outcome, v.Why = report.OutcomeNotJudged, fmt.Sprintf("too few rounds (%d < %d)", q.N, minVerdictRounds)
	case len(why) > 0:
		v.Outcome, v.Why = report.OutcomeNotMet, strings.Join(why, "; ")
	default:
		v.Outcome = report.OutcomeMet
	}
	return v
}

// reads says whether a workload cell's traffic is what it receives (the many-row cells), as its
// byte count says (see byteCount in workloadcells.go: "... received", "... sent", "...
// sent+received").
func reads(c *report.Cell) bool {
	return strings.HasSuffix(c.Counted, " received")
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
