package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
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
	gain := func(limit float64) report.Target {
		return report.Target{Kind: report.TargetGain, Limit: limit, Bound: 1}
	}
	tests := []struct {
		name    string
		t       report.Target
		rs      []float64
		met     bool
		better  int
		worse   int
		whyHas  string // a part of the reason, when not met
		pBelow  float64
		pAtLeas float64
		holmP   float64 // the Holm-adjusted p-value a TargetNotWorseRun reads
	}{
		{name: "gain, every round cheaper", t: gain(0.88), rs: rep(20, 0.85), met: true, better: 20, pBelow: 0.001},
		// The case the old rule called MET: the median meets the limit, the rounds do not.
		{name: "median met, 12/20 rounds, p=0.50", t: gain(0.88), rs: join(rep(12, 0.80), rep(8, 1.05)),
			better: 12, worse: 8, whyHas: "rounds do not support it: better in 12/20 (60% < 75%), sign test p=0.503", pAtLeas: 0.05},
		{name: "75% rule alone (8/10, p=0.11)", t: gain(0.88), rs: join(rep(8, 0.8), rep(2, 1.2)), met: true, better: 8, worse: 2, pAtLeas: 0.05},
		{name: "too few rounds", t: gain(0.88), rs: rep(9, 0.8), better: 9, whyHas: "too few rounds (9 < 10) for a verdict"},
		{name: "sign test alone (28/40 = 70%, p<0.05)", t: gain(0.88), rs: join(rep(28, 0.8), rep(12, 1.1)), met: true, better: 28, worse: 12, pBelow: 0.05},
		{name: "median above the limit", t: gain(0.88), rs: rep(20, 0.90), better: 20, whyHas: "median 0.900 above the limit 0.88"},
		{name: "both conditions fail", t: gain(0.88), rs: join(rep(10, 0.95), rep(10, 1.05)),
			better: 10, worse: 10, whyHas: "median 1.000 above the limit 0.88; rounds do not support it"},
		{name: "ties count neither way", t: gain(1), rs: join(rep(9, 1), rep(1, 0.9)), better: 1, whyHas: "better in 1/10"},
		{name: "not worse: even split", t: report.Target{Kind: report.TargetNotWorse, Limit: 1, Bound: 1}, rs: join(rep(10, 0.99), rep(10, 1.0001)),
			met: true, better: 10, worse: 10},
		{name: "not worse: median 1.00 but 16/20 dearer", t: report.Target{Kind: report.TargetNotWorse, Limit: 1.01, Bound: 1}, rs: join(rep(4, 0.9), rep(16, 1.005)),
			better: 4, worse: 16, whyHas: "worse in 16/20 rounds, sign test p=0.012"},
		{name: "not worse, Holm: worse in 16/20 with p=0.012, but Holm p=0.3", t: report.Target{Kind: report.TargetNotWorseRun, Limit: 1.01, Bound: 1},
			rs: join(rep(4, 0.9), rep(16, 1.005)), holmP: 0.3, met: true, better: 4, worse: 16},
		{name: "not worse, Holm: Holm p=0.01", t: report.Target{Kind: report.TargetNotWorseRun, Limit: 1.01, Bound: 1},
			rs: join(rep(4, 0.9), rep(16, 1.005)), holmP: 0.01, better: 4, worse: 16, whyHas: "worse in 16/20 rounds, Holm-adjusted p=0.01 (< 0.05)"},
		{name: "not worse, Holm: median above 1", t: report.Target{Kind: report.TargetNotWorseRun, Limit: 1, Bound: 1},
			rs: rep(20, 1.02), holmP: 0.2, worse: 20, whyHas: "median 1.020 above the limit 1.00"},
		{name: "reads: bound is the limit", t: report.Target{Kind: report.TargetGain, Limit: 1.0 / 3, Bound: 1.0 / 3}, rs: join(rep(9, 0.2), rep(1, 0.5)), met: true, better: 9, worse: 1},
		{name: "reads: exactly at the limit is no better", t: report.Target{Kind: report.TargetGain, Limit: 0.5, Bound: 0.5}, rs: rep(10, 0.5), whyHas: "better in 0/10"},
		{name: "reads: half of native's", t: report.Target{Kind: report.TargetGain, Limit: 1.0 / 3, Bound: 1.0 / 3}, rs: rep(10, 0.54), worse: 10, whyHas: "median 0.540 above the limit 0.33"},
		{name: "higher is better", t: report.Target{Kind: report.TargetGain, Limit: 1.10, Bound: 1, Higher: true}, rs: rep(10, 1.2), met: true, better: 10},
		{name: "below a higher-is-better limit", t: report.Target{Kind: report.TargetGain, Limit: 1.10, Bound: 1, Higher: true}, rs: rep(10, 0.96), worse: 10,
			whyHas: "median 0.960 below the limit 1.10"},
		{name: "not measured", t: gain(0.88), rs: nil, whyHas: "not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge(tt.t, tt.rs, tt.holmP)
			if v.Met != tt.met || v.Better != tt.better || v.Worse != tt.worse {
				t.Errorf("judge = met %v, better %d, worse %d (%s); want met %v, better %d, worse %d",
					v.Met, v.Better, v.Worse, v.Why, tt.met, tt.better, tt.worse)
			}
			if tt.met && v.Why != "" {
				t.Errorf("met, but why = %q", v.Why)
			}
			if !tt.met && !strings.Contains(v.Why, tt.whyHas) {
				t.Errorf("why = %q, want it to contain %q", v.Why, tt.whyHas)
			}
			if tt.pBelow > 0 && v.P >= tt.pBelow {
				t.Errorf("p = %v, want < %v", v.P, tt.pBelow)
			}
			if tt.pAtLeas > 0 && v.P < tt.pAtLeas {
				t.Errorf("p = %v, want >= %v", v.P, tt.pAtLeas)
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
	// varbinary/4096 TLS: 2.6..2.8 against 2.9..3.3, cheaper in 5/5 rounds: not worse, but five
	// rounds are too few for a verdict.
	tls, ok := byName["varbinary/4096: bridged TLS/native TLS, CPU per MiB"]
	if !ok || tls.Kind != report.TargetNotWorseRun || tls.Limit != 1 || tls.Measured.Better != 5 || tls.Measured.Why != "too few rounds (5 < 10) for a verdict" {
		t.Errorf("TLS CPU target = %+v (found %v), want not worse (Holm), better 5, too few rounds alone", tls, ok)
	}
	// TLS reads: both arms 1290 per MiB, a ratio of 1, far above a third.
	if rd := byName["varbinary/4096: bridged TLS/native TLS, read system calls per MiB"]; rd.Measured.Met || rd.Kind != report.TargetGain ||
		!strings.Contains(rd.Measured.Why, "median 1.000 above the limit 0.33") {
		t.Errorf("TLS reads target = %+v, want NOT MET for its median", rd)
	}
	// plain: 0.93, above 0.90.
	if pl := byName["varbinary/4096: bridged plain/native plain, CPU per MiB"]; pl.Measured.Met || !strings.Contains(pl.Measured.Why, "above the limit 0.90") {
		t.Errorf("plain report.Target = %+v, want NOT MET for its median", pl)
	}
	// the sweep cell and the transport cell have no targets of their own.
	for name := range byName {
		if strings.Contains(name, "records") {
			t.Errorf("report.Target %q for a sweep or transport cell", name)
		}
	}
	// round trip: equal CPU -> not worse, failing on the rounds alone.
	if rt := byName["round trip SELECT @p1, @p2: bridged TLS/native TLS, CPU per operation"]; rt.Kind != report.TargetNotWorse || rt.Measured.Why != "too few rounds (5 < 10) for a verdict" {
		t.Errorf("round-trip report.Target = %+v, want not worse, failing on the rounds alone", rt)
	}
	// narrow rows read: under TLS not worse with Holm's adjustment (dearer in 6/6, p=0.031, Holm
	// p=0.25: not a loss of the run), in plaintext a gain.
	nr := byName["narrow rows x100000: bridged TLS/native TLS, CPU per operation"]
	if nr.Kind != report.TargetNotWorseRun || math.Abs(nr.Measured.HolmP-0.25) > 1e-12 || strings.Contains(nr.Measured.Why, "Holm") {
		t.Errorf("narrow-rows TLS target = %+v, want not worse (Holm) with Holm p 0.25, not failing on it", nr)
	}
	if np := byName["narrow rows x100000: bridged plain/native plain, CPU per operation"]; np.Kind != report.TargetGain || np.Measured.Met {
		t.Errorf("narrow-rows plain target = %+v, want NOT MET, gain", np)
	}
	if len(r.Worse) != 1 || r.Worse[0].Cell != "driver narrow rows x100000" {
		t.Fatalf("worse cells = %+v, want the narrow-rows TLS ratio alone", r.Worse)
	}
	// 0/6 rounds cheaper: p = 2/64, the smallest of the 8 ratios' p-values; Holm multiplies it
	// by 8.
	if got, want := r.Worse[0].HolmP, 8*2.0/64; math.Abs(got-want) > 1e-12 || r.RatiosChecked != 8 {
		t.Errorf("Holm-adjusted p = %v over %d ratios, want %v over 8", got, r.RatiosChecked, want)
	}
}

// TestTargetsInTable checks the targets, the worse cells and the ratio count that checkTargets
// and worseCells give fakeReport, as the table prints them.
func TestTargetsInTable(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"varbinary/4096: bridged plain/native plain, CPU per MiB = 0.931 [0.93-0.93], better 5/5, p=0.062; target <= 0.90 (gain): NOT MET: too few rounds (5 < 10) for a verdict; median 0.931 above the limit 0.90",
		"varbinary/4096: bridged TLS/native TLS, CPU per MiB = 0.867 [0.84-0.90], better 5/5, p=0.062, Holm-adjusted p=0.438; target <= 1.00 (not worse, Holm): NOT MET: too few rounds (5 < 10) for a verdict",
		"round trip SELECT @p1, @p2: bridged TLS/native TLS, CPU per operation = 1.000 [1.00-1.00], better 0/5, p=1; target <= 1.00 (not worse): NOT MET: too few rounds (5 < 10) for a verdict",
		"no cell worse than its baseline with p < 0.05 (8 ratios): NOT MET, 1 worse:",
		"  driver narrow rows x100000: bridged TLS/native TLS = 1.04 [1.04-1.04] 0/6 p=0.031, Holm-adjusted p=0.25",
		"  for the run as a whole (Holm's correction over the 8 ratios, p < 0.05): 0 worse",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
