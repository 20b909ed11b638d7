package main

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// standing is where the rounds of one ratio put it: the one judgement of the bench. The verdict
// lists every judged ratio under its standing (conclude), the guard fails on the dearer ones
// (worseCells), and a target on a ratio reads its outcome from the same standing (outcome).
type standing uint8

const (
	fewRounds   standing = iota // fewer than minVerdictRounds rounds: judged no way
	cheaper                     // the verdict's "saves"
	same                        // "does not save": no difference the rounds show
	dearerAlone                 // dearer with p < significance on its own, not after Holm's adjustment
	dearer                      // "makes worse": dearer with Holm-adjusted p < significance
)

// standingNames are the standings' names, keyed by standing.
var standingNames = [...]string{
	fewRounds:   "too few rounds",
	cheaper:     "cheaper",
	same:        "same",
	dearerAlone: "dearer alone",
	dearer:      "dearer",
}

// String names the standing.
func (s standing) String() string {
	if int(s) < len(standingNames) {
		return standingNames[s]
	}
	return fmt.Sprintf("standing(%d)", uint8(s))
}

// judge places a ratio by its rounds. q counts the rounds below the bound (Lower, better) and
// above it (Higher) with the sign test of the two; holmP is q.P adjusted by Holm's method over
// every judged ratio of the run (1 for a ratio outside that family):
//
//   - fewRounds: fewer than minVerdictRounds rounds;
//   - cheaper: the median below the bound, and below it in at least supportShare of the rounds
//     or a sign test p < significance with more rounds below;
//   - dearer: more rounds above than below with holmP < significance;
//   - dearerAlone: more rounds above than below with q.P < significance, holmP not;
//   - same: the rest.
func judge(q stats.Ratio, bound, holmP float64) standing {
	up := q.Higher > q.Lower
	switch {
	case q.N < minVerdictRounds:
		return fewRounds
	case q.Median < bound && supportsGain(q):
		return cheaper
	case up && holmP < significance:
		return dearer
	case up && q.P < significance:
		return dearerAlone
	}
	return same
}

// supportsGain says whether the rounds of q support a gain: below the bound in at least
// supportShare of them, or a sign test below significance with more rounds below.
func supportsGain(q stats.Ratio) bool {
	return float64(q.Lower) >= supportShare*float64(q.N) || (q.P < significance && q.Lower > q.Higher)
}

// judgedRatio is one ratio of the run with its judgement.
type judgedRatio struct {
	cell     *report.Cell
	measure  string       // measureCPU or measureReads
	ratio    report.Ratio // rounds counted against 1
	holmP    float64      // client CPU: adjusted over the judged ratios; read system calls: 1
	standing standing
	info     bool // shown, not judged (informational); standing and holmP unset
}

// key names the ratio for checkTargets.
func (j judgedRatio) key() string {
	return ratioKey(j.cell, j.measure, j.ratio.Candidate, j.ratio.Baseline)
}

// ratioKey names a ratio of the run: its cell, measure, candidate and baseline.
func ratioKey(c *report.Cell, measure, candidate, baseline string) string {
	return c.Group + " " + c.Name + "\x00" + measure + "\x00" + candidate + "\x00" + baseline
}

// judgeRun judges every ratio of the run: the client CPU ratio of every cell (those that
// informational names are marked and left out of the family), each with its sign-test p-value
// adjusted by Holm's method over all the judged ones (stats.HolmAdjust); then the read system
// calls of the driver value cells, bridged/native, outside that family (they are not a cost the
// guard checks).
func judgeRun(r *report.Report) []judgedRatio {
	var out []judgedRatio
	var family []int
	var ps []float64
	for _, c := range r.Cells {
		for _, q := range c.Ratios {
			if q.N == 0 {
				continue
			}
			j := judgedRatio{cell: c, measure: measureCPU, ratio: q, info: informational(c, q)}
			if !j.info {
				family = append(family, len(out))
				ps = append(ps, q.P)
			}
			out = append(out, j)
		}
	}
	for i, p := range stats.HolmAdjust(ps) {
		j := &out[family[i]]
		j.holmP = p
		j.standing = judge(j.ratio.Ratio, 1, p)
	}
	for _, c := range r.CellsOf(report.GroupDriver) {
		if c.Workload != "" || c.RecordSize != 0 {
			continue
		}
		for _, p := range report.DriverRatioPairs {
			rs := armRatios(c, p[0], p[1], report.Sample.ReadsPerMiB)
			if len(rs) == 0 {
				continue
			}
			q := roundsAgainst(rs, 1)
			out = append(out, judgedRatio{cell: c, measure: measureReads, ratio: report.Ratio{Candidate: p[0], Baseline: p[1], Ratio: q},
				holmP: 1, standing: judge(q, 1, 1)})
		}
	}
	return out
}

// conclude sorts the run's ratios into the verdict that ends the table (report.RunVerdict), each
// under its standing (judge): saves, does not save, makes worse, dearer on its own only, too few
// rounds; and apart, the informational ratios, which are shown and not judged.
func conclude(r *report.Report) *report.RunVerdict {
	v := &report.RunVerdict{MinRounds: minVerdictRounds}
	for _, j := range judgeRun(r) {
		f := report.Finding{Cell: j.cell.Name, Arms: armsLabel(j.ratio.Candidate, j.ratio.Baseline), Measure: j.measure, Ratio: j.ratio}
		if j.measure == measureCPU {
			f.HolmP = j.holmP
		}
		if j.info {
			v.Informational = append(v.Informational, f)
			v.InformationalWhy = informationalWhy
			continue
		}
		if j.measure == measureCPU {
			v.Checked++
		}
		switch j.standing {
		case fewRounds:
			v.FewRounds = append(v.FewRounds, f)
		case cheaper:
			v.Saves = append(v.Saves, f)
		case same:
			v.Same = append(v.Same, f)
		case dearerAlone:
			v.WorseAlone = append(v.WorseAlone, f)
		case dearer:
			v.Worse = append(v.Worse, f)
		default:
			panic(fmt.Sprintf("bench: conclude: unknown standing %v", j.standing))
		}
	}
	return v
}

// worseCells returns every judged client CPU ratio dearer than its baseline with p < significance
// on its own, each with its Holm-adjusted p-value and whether the loss stands for the run as a
// whole (the verdict's "makes worse", what the guard forbids), and how many ratios were judged.
func worseCells(r *report.Report) (worse []report.WorseCell, checked int) {
	for _, j := range judgeRun(r) {
		if j.info || j.measure != measureCPU {
			continue
		}
		checked++
		if j.standing == dearer || j.standing == dearerAlone {
			worse = append(worse, report.WorseCell{Cell: j.cell.Group + " " + j.cell.Name, Ratio: j.ratio, HolmP: j.holmP, ForRun: j.standing == dearer})
		}
	}
	return worse, checked
}

// roundsAgainst summarizes per-round ratios rs against bound as stats.PairedRatio does against
// 1: rounds below the bound are lower, above it higher, and the sign test of the two.
func roundsAgainst(rs []float64, bound float64) stats.Ratio {
	q := stats.Ratio{Summary: stats.Summarize(rs)}
	for _, x := range rs {
		switch {
		case x < bound:
			q.Lower++
		case x > bound:
			q.Higher++
		}
	}
	q.P = stats.SignTestP(q.Lower, q.Lower+q.Higher)
	return q
}

// armsLabel names a ratio's arms in the verdict: "TLS" and "plain" for the driver pairs, the
// arm names otherwise.
func armsLabel(candidate, baseline string) string {
	switch {
	case candidate == report.ArmBridgedTLS && baseline == report.ArmNativeTLS:
		return "TLS"
	case candidate == report.ArmBridgedPlain && baseline == report.ArmNativePlain:
		return "plain"
	}
	return candidate + "/" + baseline
}
