package main

import (
	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// conclude sorts the run's ratios into the verdict that ends the table (report.RunVerdict):
//
//   - saves: a client CPU ratio of a cell (bridged/native, or bridge/tls.Conn) whose median is
//     below 1 and whose rounds support it as a gain target's must (cheaper in at least 75% of
//     the rounds, or sign test p < 0.05 with more rounds cheaper); likewise the read system calls
//     of the driver value cells;
//   - worse: a client CPU ratio dearer in more rounds than cheaper with Holm-adjusted p < 0.05
//     over every ratio of the run (ratioFamily): a loss that stands for the run as a whole;
//   - worse alone: dearer with p < 0.05 on its own but not after Holm's adjustment (with some 30
//     ratios a run flags about one such by chance);
//   - same: every other ratio with enough rounds;
//   - few rounds: ratios of fewer than minVerdictRounds rounds, which are judged no way.
func conclude(r *report.Report) *report.RunVerdict {
	v := &report.RunVerdict{MinRounds: minVerdictRounds}
	// place puts f where its rounds say; worse: dearer with Holm-adjusted p < significance,
	// alone: dearer with p < significance before the adjustment only.
	place := func(f report.Finding, worse, alone bool) {
		q := f.Ratio
		switch {
		case q.N < minVerdictRounds:
			v.FewRounds = append(v.FewRounds, f)
		case q.Median < 1 && supportsGain(q.Ratio):
			v.Saves = append(v.Saves, f)
		case worse:
			v.Worse = append(v.Worse, f)
		case alone:
			v.WorseAlone = append(v.WorseAlone, f)
		default:
			v.Same = append(v.Same, f)
		}
	}
	cells := map[string]*report.Cell{}
	for _, c := range r.Cells {
		cells[c.Group+" "+c.Name] = c
	}
	family := ratioFamily(r)
	v.Checked = len(family)
	for _, wc := range family {
		q := wc.Ratio
		dearer := q.Higher > q.Lower && q.P < significance
		place(report.Finding{Cell: cells[wc.Cell].Name, Arms: armsLabel(q.Candidate, q.Baseline), Measure: "client CPU", Ratio: q, HolmP: wc.HolmP},
			dearer && wc.HolmP < significance, dearer)
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
			q := report.Ratio{Candidate: p[0], Baseline: p[1], Ratio: countRatio(rs)}
			place(report.Finding{Cell: c.Name, Arms: armsLabel(p[0], p[1]), Measure: "read system calls", Ratio: q}, false, false)
		}
	}
	return v
}

// supportsGain says whether the rounds of q support a gain: cheaper in at least supportShare of
// them, or a sign test below significance with more rounds cheaper (the rule of judge).
func supportsGain(q stats.Ratio) bool {
	return float64(q.Lower) >= supportShare*float64(q.N) || (q.P < significance && q.Lower > q.Higher)
}

// countRatio summarizes per-round ratios rs as stats.PairedRatio does: rounds below 1 are
// lower, above 1 higher, and the sign test of the two.
func countRatio(rs []float64) stats.Ratio {
	q := stats.Ratio{Summary: stats.Summarize(rs)}
	for _, x := range rs {
		switch {
		case x < 1:
			q.Lower++
		case x > 1:
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
