package main

import (
	"bytes"
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
