package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/report/reporttest"
)

// alternate returns n figures alternating a and b, a first.
func alternate(n int, a, b float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = a
		if i%2 == 1 {
			xs[i] = b
		}
	}
	return xs
}

// withReads sets the read system calls of every sample of a (10 MiB each) to perMiB per MiB.
func withReads(a *report.Arm, perMiB int64) *report.Arm {
	for i := range a.Samples {
		a.Samples[i].Reads = perMiB * 10
	}
	return a
}

// verdictReport is a 12-round run with one of each verdict:
//   - varbinary/4096: TLS CPU the same (arms alternate cheaper), plain CPU 0.88 in every round,
//     TLS reads 700 against 1290 per MiB, plain reads 180 against 2700;
//   - upload: TLS 0.58 in every round, plain the same;
//   - wide rows: TLS 1.06 in every round (p=0.0005, Holm-adjusted 0.0039: worse for the run);
//     plain dearer in 10 of 12 rounds (p=0.039, Holm-adjusted above 0.05: worse on its own);
//   - a transport cell of 5 rounds: too few to judge.
func verdictReport() *report.Report {
	const n = 12
	r := reporttest.Report()
	r.CPUModel, r.Rounds = "AMD EPYC 7B13", n
	cells := []*report.Cell{
		{Group: report.GroupDriver, Name: "varbinary/4096", Value: "varbinary", PacketSize: 4096, Arms: []*report.Arm{
			withReads(reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...), 1290),
			withReads(reporttest.Arm(report.ArmBridgedTLS, alternate(n, 2.9, 3.1)...), 700),
			withReads(reporttest.Arm(report.ArmNativePlain, rep(n, 2.5)...), 2700),
			withReads(reporttest.Arm(report.ArmBridgedPlain, rep(n, 2.2)...), 180),
		}},
		{Group: report.GroupDriver, Name: "upload 1 MiB varbinary(max) parameter", PacketSize: 4096, Workload: "SELECT DATALENGTH(@p1)",
			Unit: "query", PerOp: 1, BytesPerOp: 1 << 20, Counted: "TDS bytes sent", Arms: []*report.Arm{
				reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedTLS, rep(n, 1.74)...),
				reporttest.Arm(report.ArmNativePlain, rep(n, 2)...),
				reporttest.Arm(report.ArmBridgedPlain, alternate(n, 1.9, 2.1)...),
			}},
		{Group: report.GroupDriver, Name: "wide rows x100000", PacketSize: 4096, Workload: "SELECT ...",
			Unit: "row", PerOp: 100000, BytesPerOp: 1 << 20, Counted: "TDS bytes received", Arms: []*report.Arm{
				reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedTLS, rep(n, 3.18)...),
				reporttest.Arm(report.ArmNativePlain, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedPlain, join(rep(10, 3.09), rep(2, 2.97))...),
			}},
		{Group: report.GroupTransport, Name: "16 KiB records, 64 KiB reads", RecordSize: 16 << 10, Arms: []*report.Arm{
			reporttest.Arm(report.ArmTLSConn, rep(5, 0.6)...),
			reporttest.Arm(report.ArmBridge, rep(5, 0.61)...),
		}},
	}
	pairs := map[string][][2]string{report.GroupDriver: report.DriverRatioPairs, report.GroupTransport: {{report.ArmBridge, report.ArmTLSConn}}}
	for _, c := range cells {
		c.Finish(pairs[c.Group])
	}
	r.Cells, r.Idle = cells, nil
	r.Targets = checkTargets(r)
	r.Worse, r.RatiosChecked = worseCells(r)
	r.Verdict = conclude(r)
	return r
}

// names lists the findings as "cell, arms, measure".
func names(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Cell+", "+f.Arms+", "+f.Measure)
	}
	return out
}

func TestConclude(t *testing.T) {
	v := verdictReport().Verdict
	tests := []struct {
		name string
		got  []report.Finding
		want []string
	}{
		{"saves", v.Saves, []string{
			"varbinary/4096, plain, client CPU", "upload 1 MiB varbinary(max) parameter, TLS, client CPU",
			"varbinary/4096, TLS, read system calls", "varbinary/4096, plain, read system calls",
		}},
		{"same", v.Same, []string{"varbinary/4096, TLS, client CPU", "upload 1 MiB varbinary(max) parameter, plain, client CPU"}},
		{"worse", v.Worse, []string{"wide rows x100000, TLS, client CPU"}},
		{"worse alone", v.WorseAlone, []string{"wide rows x100000, plain, client CPU"}},
		{"few rounds", v.FewRounds, []string{"16 KiB records, 64 KiB reads, bridge/tls.Conn, client CPU"}},
	}
	for _, tt := range tests {
		if got := strings.Join(names(tt.got), "; "); got != strings.Join(tt.want, "; ") {
			t.Errorf("%s = %s\nwant %s", tt.name, got, strings.Join(tt.want, "; "))
		}
	}
	if v.Checked != 7 {
		t.Errorf("checked %d ratios, want 7", v.Checked)
	}
}

// TestVerdictInTable checks that the table ends with the verdict, each finding with its ratio
// and rounds.
func TestVerdictInTable(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, verdictReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	at := strings.Index(out, "\n== Verdict on this machine: AMD EPYC 7B13, 2 CPUs; 12 rounds, 2026-11-30 07:00 UTC ==\n")
	if at < 0 || strings.Contains(out[at+1:], "\n== ") {
		t.Fatalf("the table does not end with the verdict:\n%s", out)
	}
	verdict := out[at:]
	for _, want := range [][]string{
		{"the bridge saves:"},
		{"  upload 1 MiB varbinary(max) parameter, TLS, client CPU", "0.58", "12/12 rounds", " p<0.001"},
		{"  varbinary/4096, plain, read system calls", "0.07", "12/12 rounds"},
		{"it does not save (no difference the rounds show):"},
		{"  client CPU, TLS: varbinary/4096 1.00 (6/12)"},
		{"  client CPU, plain: upload 1 MiB varbinary(max) parameter 1.00 (6/12)"},
		{"it makes worse (Holm-adjusted p < 0.05 over the 7 ratios):"},
		{"  wide rows x100000, TLS, client CPU", "1.06", "0/12 rounds cheaper", "Holm-adjusted p=0.003"},
		{"not worse for the run as a whole, though dearer with p < 0.05 on its own"},
		{"  client CPU, plain: wide rows x100000 1.03 (2/12, p=0.039, Holm 0.154)"},
		{"too few rounds to judge (fewer than 10; `make bench` runs 20):"},
		{"  client CPU, bridge/tls.Conn: 16 KiB records, 64 KiB reads 1.02 (0/5)"},
		{"detail: the Targets section and the tables above"},
	} {
		if reporttest.LineWith(verdict, want...) == "" {
			t.Errorf("verdict lacks a line with %q:\n%s", want, verdict)
		}
	}
}

// TestVerdictFewRounds checks that a run of too few rounds says so instead of listing nothing
// saved and nothing worse.
func TestVerdictFewRounds(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "\nno ratio has the rounds to judge it") || strings.Contains(out, "the bridge saves") {
		t.Errorf("a 5-round verdict judges ratios:\n%s", out)
	}
}

// scaled returns base times each ratio: the per-round figures of a candidate arm whose
// per-round ratios to an arm of base in every round are ratios.
func scaled(base float64, ratios []float64) []float64 {
	xs := make([]float64, len(ratios))
	for i, r := range ratios {
		xs[i] = base * r
	}
	return xs
}

// agreementReport is a 20-round run with the cells where Targets and the verdict once
// disagreed, fed to checkTargets, worseCells and conclude as a run's results are:
//   - varbinary/4096: TLS 1.006 with 10/20 rounds cheaper ("not worse" MET; the verdict: no
//     difference); plaintext 0.88 in every round; TLS read calls 0.54 of native's;
//   - varbinary/16384: plaintext 0.99, cheaper in 10 rounds and tied in 10 (the verdict saves,
//     the target asks 0.90: NOT MET);
//   - wide rows: TLS 1.19 with 1/20 rounds cheaper (NOT MET; the verdict: makes worse);
//     plaintext 12/20 cheaper;
//   - round trip: TLS dearer in 16/20 rounds, p=0.012 alone (MET; the verdict: dearer on its
//     own only);
//   - upload: TLS 0.60;
//   - a fresh-process cell of 5 rounds (not judged; the verdict: too few rounds);
//   - transport, 16 KiB records, TDS header+body: the coalescing Reader 1.19 with 1/20 cheaper
//     (informational), the tls.Conn read the same.
func agreementReport() *report.Report {
	const n = 20
	mixed := func(k int, lo, hi float64) []float64 { return join(rep(k, lo), rep(n-k, hi)) }
	r := reporttest.Report()
	r.Rounds = n
	cells := []*report.Cell{
		{Group: report.GroupDriver, Name: "varbinary/4096", Value: "varbinary", PacketSize: 4096, Arms: []*report.Arm{
			withReads(reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...), 1290),
			withReads(reporttest.Arm(report.ArmBridgedTLS, scaled(3, mixed(10, 0.995, 1.017))...), 700),
			withReads(reporttest.Arm(report.ArmNativePlain, rep(n, 2.5)...), 2700),
			withReads(reporttest.Arm(report.ArmBridgedPlain, scaled(2.5, rep(n, 0.88))...), 180),
		}},
		{Group: report.GroupDriver, Name: "varbinary/16384", Value: "varbinary", PacketSize: 16384, Arms: []*report.Arm{
			reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...),
			reporttest.Arm(report.ArmBridgedTLS, alternate(n, 2.9, 3.1)...),
			reporttest.Arm(report.ArmNativePlain, rep(n, 2.5)...),
			reporttest.Arm(report.ArmBridgedPlain, scaled(2.5, alternate(n, 0.98, 1))...),
		}},
		{Group: report.GroupDriver, Name: "fresh process varbinary/4096", Value: "varbinary", PacketSize: 4096, Arms: []*report.Arm{
			reporttest.Arm(report.ArmNativeTLS, rep(5, 3)...),
			reporttest.Arm(report.ArmBridgedTLS, rep(5, 2)...),
			reporttest.Arm(report.ArmNativePlain, rep(5, 3)...),
			reporttest.Arm(report.ArmBridgedPlain, rep(5, 2)...),
		}},
		{Group: report.GroupDriver, Name: "round trip SET NOCOUNT ON", PacketSize: 4096, Workload: "SET NOCOUNT ON", RoundTrip: true,
			Unit: "query", PerOp: 1, BytesPerOp: 100, Counted: "TDS bytes sent+received", Arms: []*report.Arm{
				reporttest.Arm(report.ArmNativeTLS, rep(n, 1)...),
				reporttest.Arm(report.ArmBridgedTLS, mixed(4, 0.9, 1.005)...),
				reporttest.Arm(report.ArmNativePlain, rep(n, 1)...),
				reporttest.Arm(report.ArmBridgedPlain, alternate(n, 0.99, 1.01)...),
			}},
		{Group: report.GroupDriver, Name: "wide rows x100000", PacketSize: 4096, Workload: "SELECT ...",
			Unit: "row", PerOp: 100000, BytesPerOp: 1 << 20, Counted: "TDS bytes received", Arms: []*report.Arm{
				reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedTLS, scaled(3, mixed(1, 0.97, 1.19))...),
				reporttest.Arm(report.ArmNativePlain, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedPlain, mixed(12, 2.9, 3.1)...),
			}},
		{Group: report.GroupDriver, Name: "upload 1 MiB varbinary(max) parameter", PacketSize: 4096, Workload: "SELECT DATALENGTH(@p1)",
			Unit: "query", PerOp: 1, BytesPerOp: 1 << 20, Counted: "TDS bytes sent", Arms: []*report.Arm{
				reporttest.Arm(report.ArmNativeTLS, rep(n, 3)...),
				reporttest.Arm(report.ArmBridgedTLS, scaled(3, rep(n, 0.6))...),
				reporttest.Arm(report.ArmNativePlain, rep(n, 2)...),
				reporttest.Arm(report.ArmBridgedPlain, alternate(n, 1.9, 2.1)...),
			}},
		{Group: report.GroupTransport, Name: "16 KiB records, " + patternTDS, RecordSize: 16 << 10, Pattern: patternTDS, Arms: []*report.Arm{
			reporttest.Arm(report.ArmTLSConn, rep(n, 0.6)...),
			reporttest.Arm(report.ArmBridge, scaled(0.6, mixed(1, 0.97, 1.19))...),
			reporttest.Arm(report.ArmBridgeCoalesce, alternate(n, 0.59, 0.61)...),
		}},
	}
	transportPairs := [][2]string{{report.ArmBridge, report.ArmTLSConn}, {report.ArmBridgeCoalesce, report.ArmTLSConn}}
	for _, c := range cells {
		if c.Group == report.GroupTransport {
			c.Finish(transportPairs)
		} else {
			c.Finish(report.DriverRatioPairs)
		}
	}
	r.Cells, r.Idle = cells, nil
	r.Targets = checkTargets(r)
	r.Worse, r.RatiosChecked = worseCells(r)
	r.Verdict = conclude(r)
	return r
}

// verdictList returns the name of the verdict's list that holds the finding of the ratio
// (cell, arms, measure), and the finding.
func verdictList(v *report.RunVerdict, cell, arms, measure string) (string, report.Finding) {
	for _, l := range []struct {
		name string
		fs   []report.Finding
	}{{"saves", v.Saves}, {"same", v.Same}, {"worse", v.Worse}, {"worse alone", v.WorseAlone}, {"few rounds", v.FewRounds}, {"informational", v.Informational}} {
		for _, f := range l.fs {
			if f.Cell == cell && f.Arms == arms && f.Measure == measure {
				return l.name, f
			}
		}
	}
	return "", report.Finding{}
}

// checkAgreement fails t where the report's Targets and its verdict disagree: a target not
// judged whose ratio the verdict judges, or the reverse; a "not worse" target NOT MET whose
// ratio the verdict does not list as made worse, or the reverse; a gain target MET whose ratio
// the verdict does not list as a saving within the limit (or, against 1, one the verdict lists
// as a saving within the limit that is not MET); a guard that fails without a loss in the
// verdict, or the reverse; a NOT MET in the table for anything else.
func checkAgreement(t *testing.T, r *report.Report) {
	t.Helper()
	v := r.Verdict
	for _, tg := range r.Targets {
		list, f := verdictList(v, tg.Cell, tg.Arms, tg.Measure)
		o := tg.Measured.Outcome
		switch {
		case list == "" || list == "informational":
			t.Errorf("%s: its ratio is %q in the verdict", tg.Name, list)
		case (o == report.OutcomeNotJudged) != (list == "few rounds"):
			t.Errorf("%s: %v, but the verdict lists its ratio under %s", tg.Name, o, list)
		case tg.Kind == report.TargetNotWorse && (o == report.OutcomeNotMet) != (list == "worse"):
			t.Errorf("%s: %v (%s), but the verdict lists its ratio under %s", tg.Name, o, tg.Measured.Why, list)
		case tg.Kind == report.TargetGain && o == report.OutcomeMet && (list != "saves" || f.Ratio.Median > tg.Limit):
			t.Errorf("%s: MET, but the verdict lists its ratio under %s with median %.3f", tg.Name, list, f.Ratio.Median)
		case tg.Kind == report.TargetGain && tg.Bound == 1 && list == "saves" && f.Ratio.Median <= tg.Limit && o != report.OutcomeMet:
			t.Errorf("%s: %v (%s), but the verdict saves %.3f", tg.Name, o, tg.Measured.Why, f.Ratio.Median)
		}
	}
	var forRun []string
	for _, wc := range r.Worse {
		if wc.ForRun {
			forRun = append(forRun, strings.TrimPrefix(wc.Cell, wc.Cell[:strings.Index(wc.Cell, " ")+1])+", "+armsLabel(wc.Ratio.Candidate, wc.Ratio.Baseline))
		}
	}
	var worse []string
	for _, f := range v.Worse {
		worse = append(worse, f.Cell+", "+f.Arms)
	}
	if strings.Join(forRun, "; ") != strings.Join(worse, "; ") || r.RatiosChecked != v.Checked {
		t.Errorf("the guard fails on %q over %d ratios, the verdict makes worse %q over %d", forRun, r.RatiosChecked, worse, v.Checked)
	}
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	notMet := strings.Count(buf.String(), "NOT MET")
	want := 0
	for _, tg := range r.Targets {
		if tg.Measured.Outcome == report.OutcomeNotMet {
			want++
		}
	}
	if len(v.Worse) > 0 {
		want++ // the guard
	}
	if notMet != want {
		t.Errorf("the table says NOT MET %d times, want %d (the targets missed and the guard):\n%s", notMet, want, buf.String())
	}
}

// TestTargetsAgreeWithVerdict feeds the same results to the Targets and to the verdict and
// checks that they agree, on the cells `make bench` once contradicted itself on.
func TestTargetsAgreeWithVerdict(t *testing.T) {
	r := agreementReport()
	checkAgreement(t, r)
	byName := map[string]report.Target{}
	for _, tg := range r.Targets {
		byName[tg.Name] = tg
	}
	v := r.Verdict
	tests := []struct {
		target, cell, arms, measure string
		outcome                     report.Outcome
		list                        string
	}{
		{"varbinary/4096: bridged TLS/native TLS, CPU per MiB", "varbinary/4096", "TLS", measureCPU, report.OutcomeMet, "same"},
		{"wide rows x100000: bridged TLS/native TLS, CPU per operation", "wide rows x100000", "TLS", measureCPU, report.OutcomeNotMet, "worse"},
		{"round trip SET NOCOUNT ON: bridged TLS/native TLS, CPU per operation", "round trip SET NOCOUNT ON", "TLS", measureCPU, report.OutcomeMet, "worse alone"},
		{"varbinary/4096: bridged TLS/native TLS, read system calls per MiB", "varbinary/4096", "TLS", measureReads, report.OutcomeMet, "saves"},
		{"varbinary/4096: bridged plain/native plain, CPU per MiB", "varbinary/4096", "plain", measureCPU, report.OutcomeMet, "saves"},
		{"varbinary/16384: bridged plain/native plain, CPU per MiB", "varbinary/16384", "plain", measureCPU, report.OutcomeNotMet, "saves"},
		{"wide rows x100000: bridged plain/native plain, CPU per operation", "wide rows x100000", "plain", measureCPU, report.OutcomeNotMet, "same"},
		{"upload 1 MiB varbinary(max) parameter: bridged TLS/native TLS, CPU per operation", "upload 1 MiB varbinary(max) parameter", "TLS", measureCPU, report.OutcomeMet, "saves"},
		{"fresh process varbinary/4096: bridged TLS/native TLS, CPU per MiB", "fresh process varbinary/4096", "TLS", measureCPU, report.OutcomeNotJudged, "few rounds"},
	}
	for _, tt := range tests {
		tg, ok := byName[tt.target]
		list, f := verdictList(v, tt.cell, tt.arms, tt.measure)
		if !ok || tg.Measured.Outcome != tt.outcome || list != tt.list {
			t.Errorf("%s: %v (%s), the verdict: %s; want %v, %s", tt.target, tg.Measured.Outcome, tg.Measured.Why, list, tt.outcome, tt.list)
		}
		if tt.list == "same" && tt.arms == "TLS" && (math.Abs(f.Ratio.Median-1.006) > 1e-6 || f.Ratio.Lower != 10) {
			t.Errorf("%s: median %v, %d/20 cheaper; want 1.006, 10/20", tt.target, f.Ratio.Median, f.Ratio.Lower)
		}
	}
	if _, ok := byName["varbinary/16384: bridged TLS/native TLS, read system calls per MiB"]; ok {
		t.Errorf("a read-calls target at packet size 16384")
	}
	// The coalescing Reader read TDS-style: shown, not judged, not in the guard.
	if list, f := verdictList(v, "16 KiB records, "+patternTDS, report.ArmBridge+"/"+report.ArmTLSConn, measureCPU); list != "informational" || f.Ratio.Lower != 1 || v.InformationalWhy != informationalWhy {
		t.Errorf("the Reader's TDS ratio is %q in the verdict (%+v, why %q), want informational", list, f, v.InformationalWhy)
	}
	for _, wc := range r.Worse {
		if strings.Contains(wc.Cell, "records") {
			t.Errorf("the guard judges %s %s/%s", wc.Cell, wc.Ratio.Candidate, wc.Ratio.Baseline)
		}
	}
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range [][]string{
		{"varbinary/4096: bridged TLS/native TLS, CPU per MiB = 1.006", "better 10/20", "target not worse: MET"},
		{"wide rows x100000: bridged TLS/native TLS, CPU per operation = 1.190", "better 1/20", "target not worse: NOT MET: dearer in 19/20 rounds, Holm-adjusted p=<0.001 (< 0.05)"},
		{"no ratio dearer than its baseline for the run as a whole", "over 13 ratios): NOT MET, 1 dearer:"},
		{"  driver wide rows x100000: bridged TLS/native TLS = 1.19"},
		{"it makes worse (Holm-adjusted p < 0.05 over the 13 ratios):"},
		{"  wide rows x100000, TLS, client CPU", "1.19", "1/20 rounds cheaper", "Holm-adjusted p<0.001"},
		{"shown, not judged (the coalescing Reader read TDS-style"},
		{"  client CPU, bridge/tls.Conn: 16 KiB records, TDS header+body 1.19 (1/20)"},
	} {
		if reporttest.LineWith(out, want...) == "" {
			t.Errorf("table lacks a line with %q:\n%s", want, out)
		}
	}
}

// TestTargetsAgreeWithVerdictRandom checks the agreement on many random runs: every cell's
// per-round ratios drawn around a median from 0.6 to 1.2 with a spread, rounds from 5 to 40, so
// that the runs cover what different machine types give.
func TestTargetsAgreeWithVerdictRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	medians := []float64{0.6, 0.85, 0.9, 0.95, 0.99, 1, 1.006, 1.03, 1.08, 1.19}
	draw := func(n int) []float64 {
		m, spread := medians[rng.IntN(len(medians))], 0.2*rng.Float64()
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = m * (1 + spread*(rng.Float64()-0.5))
			if rng.IntN(8) == 0 {
				xs[i] = m // ties
			}
		}
		return xs
	}
	for run := 0; run < 300; run++ {
		r := agreementReport()
		n := 5 + rng.IntN(36)
		r.Rounds = n
		for _, c := range r.Cells {
			base := c.Arms[0]
			var pairs [][2]string
			for _, a := range c.Arms {
				x := rep(n, 3)
				if a != base && a.Name != report.ArmNativePlain {
					x = scaled(3, draw(n))
				}
				*a = *reporttest.Arm(a.Name, x...)
				if c.Group == report.GroupDriver {
					withReads(a, int64(200+rng.IntN(1200)))
				}
			}
			if c.Group == report.GroupTransport {
				pairs = [][2]string{{report.ArmBridge, report.ArmTLSConn}, {report.ArmBridgeCoalesce, report.ArmTLSConn}}
			} else {
				pairs = report.DriverRatioPairs
			}
			c.Finish(pairs)
		}
		r.Targets = checkTargets(r)
		r.Worse, r.RatiosChecked = worseCells(r)
		r.Verdict = conclude(r)
		checkAgreement(t, r)
		if t.Failed() {
			t.Fatalf("run %d of %d rounds disagrees", run, n)
		}
	}
}
