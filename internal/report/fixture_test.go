package report_test

import (
	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/report/reporttest"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// fakeReport is reporttest.Report with one target (bridged plain/native plain of
// varbinary/4096 at most 0.90, a gain) NOT MET for its median, and every ratio dearer with
// p < 0.05 (narrow rows TLS, not for the run after Holm's adjustment).
func fakeReport() *report.Report {
	r := reporttest.Report()
	// The plain target of varbinary/4096: every round's bridged plain over native plain is below 1.
	c := r.Cells[0]
	var rs []float64
	for i, s := range c.Arm(report.ArmBridgedPlain).Samples {
		rs = append(rs, s.CPUMsPerMiB()/c.Arm(report.ArmNativePlain).Samples[i].CPUMsPerMiB())
	}
	r.Targets = []report.Target{{
		Name: "varbinary/4096: bridged plain/native plain, CPU per MiB", Kind: report.TargetGain,
		Cell: "varbinary/4096", Arms: "plain", Measure: "client CPU", Limit: 0.90, Bound: 1,
		Measured: report.Verdict{Summary: stats.Summarize(rs), Better: len(rs), P: stats.SignTestP(len(rs), len(rs)),
			Outcome: report.OutcomeNotMet, Why: "median 0.931 above the limit 0.90"},
	}}
	for _, c := range r.Cells {
		for _, q := range c.Ratios {
			if q.N == 0 {
				continue
			}
			r.RatiosChecked++
			if q.Higher > q.Lower && q.P < 0.05 {
				// HolmP as the bench computes it: this p (2/64) is the smallest of the 8.
				r.Worse = append(r.Worse, report.WorseCell{Cell: c.Group + " " + c.Name, Ratio: q, HolmP: 8 * 2.0 / 64})
			}
		}
	}
	return r
}
