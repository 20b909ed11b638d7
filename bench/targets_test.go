package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// rep returns n copies of x.
func rep(n int, x float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = x
	}
	return xs
}

// join concatenates slices.
func join(xss ...[]float64) []float64 {
	var out []float64
	for _, xs := range xss {
		out = append(out, xs...)
	}
	return out
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		rs    []float64
		bound float64
		holmP float64 // 0: the ratio's own p
		want  standing
	}{
		{name: "every round cheaper", rs: rep(20, 0.85), want: cheaper},
		{name: "75% rule alone (8/10, p=0.11)", rs: join(rep(8, 0.8), rep(2, 1.2)), want: cheaper},
		{name: "sign test alone (28/40 = 70%, p<0.05)", rs: join(rep(28, 0.8), rep(12, 1.1)), want: cheaper},
		{name: "12/20 cheaper, p=0.50", rs: join(rep(12, 0.80), rep(8, 1.05)), want: same},
		{name: "too few rounds", rs: rep(9, 0.8), want: fewRounds},
		{name: "median 1.006, 10/20 cheaper", rs: join(rep(10, 0.995), rep(10, 1.017)), want: same},
		{name: "ties count neither way", rs: join(rep(9, 1), rep(1, 0.9)), want: same},
		{name: "1.19, 1/20 cheaper, Holm p 0.002", rs: join(rep(19, 1.19), rep(1, 0.97)), holmP: 0.002, want: dearer},
		{name: "dearer in 16/20 (p=0.012), Holm p 0.3", rs: join(rep(4, 0.9), rep(16, 1.005)), holmP: 0.3, want: dearerAlone},
		{name: "dearer in 13/20 (p=0.26)", rs: join(rep(7, 0.9), rep(13, 1.02)), want: same},
		{name: "reads: bound 0.60, 9/10 below", rs: join(rep(9, 0.2), rep(1, 0.7)), bound: 0.6, want: cheaper},
		{name: "reads: exactly at the bound is not below", rs: rep(10, 0.6), bound: 0.6, want: same},
		{name: "reads: 0.67 against 0.60", rs: rep(10, 0.67), bound: 0.6, holmP: 1, want: dearerAlone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound := tt.bound
			if bound == 0 {
				bound = 1
			}
			q := roundsAgainst(tt.rs, bound)
			holmP := tt.holmP
			if holmP == 0 {
				holmP = q.P
			}
			if got := judge(q, bound, holmP); got != tt.want {
				t.Errorf("judge(%d/%d below %v, p=%v, Holm p=%v) = %v, want %v", q.Lower, q.N, bound, q.P, holmP, got, tt.want)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	notWorse := report.Target{Kind: report.TargetNotWorse, Bound: 1}
	gain := func(limit, bound float64) report.Target {
		return report.Target{Kind: report.TargetGain, Limit: limit, Bound: bound}
	}
	tests := []struct {
		name    string
		t       report.Target
		rs      []float64
		holmP   float64 // 0: the ratio's own p
		want    report.Outcome
		whyHas  string
		better  int
		worseRs int
	}{
		// The line `make bench` printed as NOT MET for cells its verdict called no difference.
		{name: "not worse: median 1.006, 10/20 cheaper", t: notWorse, rs: join(rep(10, 0.995), rep(10, 1.017)), want: report.OutcomeMet, better: 10, worseRs: 10},
		{name: "not worse: 1.19, 1/20 cheaper, Holm p 0.002", t: notWorse, rs: join(rep(19, 1.19), rep(1, 0.97)), holmP: 0.002,
			want: report.OutcomeNotMet, whyHas: "dearer in 19/20 rounds, Holm-adjusted p=0.002 (< 0.05)", better: 1, worseRs: 19},
		{name: "not worse: dearer in 16/20 on its own, Holm p 0.3", t: notWorse, rs: join(rep(4, 0.9), rep(16, 1.005)), holmP: 0.3,
			want: report.OutcomeMet, better: 4, worseRs: 16},
		{name: "not worse: too few rounds", t: notWorse, rs: rep(5, 1.2), want: report.OutcomeNotJudged, whyHas: "too few rounds (5 < 10)", worseRs: 5},
		{name: "gain: every round cheaper", t: gain(0.88, 1), rs: rep(20, 0.85), want: report.OutcomeMet, better: 20},
		{name: "gain: median met, 12/20 rounds", t: gain(0.88, 1), rs: join(rep(12, 0.80), rep(8, 1.05)), want: report.OutcomeNotMet,
			whyHas: "rounds do not show it: better in 12/20 (60% < 75%), sign test p=0.503", better: 12, worseRs: 8},
		{name: "gain: cheaper, median above the limit", t: gain(0.90, 1), rs: rep(20, 0.93), want: report.OutcomeNotMet,
			whyHas: "median 0.930 above the limit 0.90", better: 20},
		{name: "gain: both fail", t: gain(0.88, 1), rs: join(rep(10, 0.95), rep(10, 1.05)), want: report.OutcomeNotMet,
			whyHas: "better in 10/20 (50% < 75%), sign test p=1 (>= 0.05); median 1.000 above the limit 0.88", better: 10, worseRs: 10},
		{name: "gain: limit 1, median exactly 1", t: gain(1, 1), rs: join(rep(6, 0.9), rep(14, 1)), want: report.OutcomeNotMet,
			whyHas: "median 1.000 not below 1.00", better: 6},
		{name: "reads: at most 0.60", t: gain(0.6, 0.6), rs: join(rep(9, 0.3), rep(1, 0.7)), want: report.OutcomeMet, better: 9, worseRs: 1},
		{name: "reads: 0.67 against 0.60", t: gain(0.6, 0.6), rs: rep(20, 0.67), want: report.OutcomeNotMet,
			whyHas: "sign test p=<0.001 for worse; median 0.670 above the limit 0.60", worseRs: 20},
		{name: "gain: too few rounds", t: gain(0.9, 1), rs: rep(5, 0.5), want: report.OutcomeNotJudged, whyHas: "too few rounds (5 < 10)", better: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := roundsAgainst(tt.rs, tt.t.Bound)
			holmP := tt.holmP
			if holmP == 0 {
				holmP = q.P
			}
			v := outcome(tt.t, judge(q, tt.t.Bound, holmP), q, holmP)
			if v.Outcome != tt.want || v.Better != tt.better || v.Worse != tt.worseRs {
				t.Errorf("outcome = %v (%s), better %d, worse %d; want %v, better %d, worse %d", v.Outcome, v.Why, v.Better, v.Worse, tt.want, tt.better, tt.worseRs)
			}
			if (tt.want == report.OutcomeMet) != (v.Why == "") || !strings.Contains(v.Why, tt.whyHas) {
				t.Errorf("why = %q, want it to contain %q (and be empty exactly when met)", v.Why, tt.whyHas)
			}
		})
	}
}

func TestCheckTargets(t *testing.T) {
	r := fakeReport()
	byName := map[string]report.Target{}
	for _, tg := range r.Targets {
		byName[tg.Name] = tg
	}
	// Five or six rounds: nothing is judged, and nothing is NOT MET.
	for _, tg := range r.Targets {
		if tg.Measured.Outcome != report.OutcomeNotJudged || !strings.HasPrefix(tg.Measured.Why, "too few rounds (") {
			t.Errorf("%s: %v (%s), want not judged for too few rounds", tg.Name, tg.Measured.Outcome, tg.Measured.Why)
		}
	}
	tls, ok := byName["varbinary/4096: bridged TLS/native TLS, CPU per MiB"]
	if !ok || tls.Kind != report.TargetNotWorse || tls.Limit != 0 || tls.Measured.Better != 5 || tls.Cell != "varbinary/4096" || tls.Arms != "TLS" || tls.Measure != measureCPU {
		t.Errorf("TLS CPU target = %+v (found %v), want not worse, no limit, better 5", tls, ok)
	}
	// TLS reads: both arms 1290 per MiB, a ratio of 1, against the bound 0.60.
	if rd := byName["varbinary/4096: bridged TLS/native TLS, read system calls per MiB"]; rd.Kind != report.TargetGain || rd.Limit != readsLimit ||
		rd.Bound != readsLimit || rd.Measured.Worse != 5 || rd.Measure != measureReads {
		t.Errorf("TLS reads target = %+v, want a gain at most 0.60, worse than 0.60 in 5 rounds", rd)
	}
	if pl := byName["varbinary/4096: bridged plain/native plain, CPU per MiB"]; pl.Kind != report.TargetGain || pl.Limit != plainValueLimit {
		t.Errorf("plain target = %+v, want a gain at most 0.90", pl)
	}
	// the sweep cell and the transport cell have no targets of their own.
	for name := range byName {
		if strings.Contains(name, "records") {
			t.Errorf("target %q for a sweep or transport cell", name)
		}
	}
	if rt := byName["round trip SELECT @p1, @p2: bridged TLS/native TLS, CPU per operation"]; rt.Kind != report.TargetNotWorse {
		t.Errorf("round-trip target = %+v, want not worse", rt)
	}
	// narrow rows read: under TLS not worse (dearer in 6/6, p=0.031, Holm p=0.25), in plaintext a gain.
	nr := byName["narrow rows x100000: bridged TLS/native TLS, CPU per operation"]
	if nr.Kind != report.TargetNotWorse || math.Abs(nr.Measured.HolmP-0.25) > 1e-12 {
		t.Errorf("narrow-rows TLS target = %+v, want not worse with Holm p 0.25", nr)
	}
	if np := byName["narrow rows x100000: bridged plain/native plain, CPU per operation"]; np.Kind != report.TargetGain {
		t.Errorf("narrow-rows plain target = %+v, want a gain", np)
	}
	// Dearer in 6/6 rounds (p=0.031), but six rounds are too few to judge: the guard does not
	// list it, as the verdict does not. The family is the 8 ratios all the same.
	if len(r.Worse) != 0 || r.RatiosChecked != 8 {
		t.Errorf("worse cells = %+v over %d ratios, want none over 8", r.Worse, r.RatiosChecked)
	}
}

// TestTargetsInTable checks the targets, the guard and the ratio count that checkTargets and
// worseCells give fakeReport, as the table prints them.
func TestTargetsInTable(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"== Targets: the decided goals, judged as the verdict judges ==",
		"not worse: not dearer with Holm-adjusted p < 0.05 over the run's 8 judged ratios (no limit on the median);",
		"fewer than 10 rounds: not judged",
		"varbinary/4096: bridged plain/native plain, CPU per MiB = 0.931 [0.93-0.93], better 5/5, p=0.062; target <= 0.90 (gain): not judged: too few rounds (5 < 10)",
		"varbinary/4096: bridged TLS/native TLS, CPU per MiB = 0.867 [0.84-0.90], better 5/5, p=0.062, Holm-adjusted p=0.438; target not worse: not judged: too few rounds (5 < 10)",
		"varbinary/4096: bridged TLS/native TLS, read system calls per MiB = 1.000 [1.00-1.00], better 0/5, p=0.062; target <= 0.60 (gain): not judged",
		"no ratio dearer than its baseline for the run as a whole (Holm-adjusted p < 0.05 over 8 ratios, plaintext included): MET",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NOT MET") {
		t.Errorf("a run of too few rounds says NOT MET:\n%s", out)
	}
}

// TestRoundsAgainstMatchesPairedRatio checks that the verdict's count of rounds against 1 is
// stats.PairedRatio's, which the cells' ratios use.
func TestRoundsAgainstMatchesPairedRatio(t *testing.T) {
	cand, base := []float64{1, 2, 3, 4, 5}, []float64{2, 2, 2, 2, 2}
	var rs []float64
	for i := range cand {
		rs = append(rs, cand[i]/base[i])
	}
	if got, want := roundsAgainst(rs, 1), stats.PairedRatio(cand, base); got != want {
		t.Errorf("roundsAgainst = %+v, PairedRatio = %+v", got, want)
	}
}
