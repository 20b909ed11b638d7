package report_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/report/reporttest"
)

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"machine: Test CPU, 2 CPUs",
		"median over rounds [p25-p75]",
		"== Driver: one SELECT of a 1 MiB value per query",
		// wall 50 ms / 10 ops = 5 ms; CPU per query = CPU per MiB (1 MiB per op)
		"native TLS     50       5.00 [5.00-5.00]",
		"3.10 [3.00-3.20]  129",
		"0.87 [0.84-0.90] 5/5 p=0.062",
		"0.93 [0.93-0.93] 5/5 p=0.062",
		"varbinary/4096: bridged plain/native plain, CPU per MiB = 0.931 [0.93-0.93], better 5/5, p=0.062; target <= 0.90 (gain): NOT MET: median 0.931 above the limit 0.90",
		"no ratio dearer than its baseline for the run as a whole (Holm-adjusted p < 0.05 over 8 ratios, plaintext included): MET",
		"  dearer with p < 0.05 on its own only, not for the run (chance does that about once in 40 ratios):",
		"  driver narrow rows x100000: bridged TLS/native TLS = 1.04 [1.04-1.04] 0/6 p=0.031, Holm-adjusted p=0.25",
		"== Driver workloads: packet size 4096",
		"narrow rows x100000: SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1); 1.00 MiB per operation (TDS bytes received)",
		"== Idle: Go heap per pooled connection, 200 connections each idle after one 1 MiB query ==",
		"bridged TLS  99.0 [98.0-100]     3       0.89 [0.87-0.89] 3/3 p=0.25",
		"== Transport only",
		"0.60 [0.60-0.60] 5/5 p=0.062",
		"== Floor",
		"AES <GCM> & co",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// x floor: bridge 0.9 / (0.2 + 0.3) ms per MiB.
	if row := reporttest.LineWith(out, "  bridge  "); !strings.Contains(row, " 1.80x ") {
		t.Errorf("bridge transport row %q: want 1.8x floor", row)
	}
	// The transport's part of the sweep cell (1 KiB records). fakeArm's figures are ms/MiB, so
	// the floor (AES 0.2 + TCP 0.3 ms/MiB) is 0.50 ms/MiB; driver = the cheaper plain arm of
	// varbinary/4096 (2.7) - TCP 0.3 = 2.40; native transport 4 - 2.4 = 1.60 (40% of 4),
	// bridged 3 - 2.4 = 0.60 (20%); x floor 3.20 and 1.20; gain taken (1.6 - 0.6) / (1.6 - 0.5).
	row := strings.Fields(reporttest.LineWith(out, "varbinary/4096, 1 KiB records", "%"))
	if want := []string{"0.50", "2.40", "1.60", "(40%)", "0.60", "(20%)", "3.20x", "1.20x", "91%"}; len(row) < len(want) || !reflect.DeepEqual(row[len(row)-len(want):], want) {
		t.Errorf("transport row %q: want it to end in %q", row, want)
	}
	// Workload per-unit CPU: 2.5 ms per op / 100000 rows = 0.025 us per row.
	if row := reporttest.LineWith(out, "native TLS", "/row"); !strings.Contains(row, " 0.03/row ") {
		t.Errorf("narrow-rows row %q: want 0.03/row", row)
	}
}

// TestWriteTableControl checks that a control run says so above every figure, and that an
// ordinary run does not.
func TestWriteTableControl(t *testing.T) {
	for _, control := range []bool{false, true} {
		r := fakeReport()
		r.Control = control
		var buf bytes.Buffer
		if err := report.WriteTable(&buf, r); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		at := strings.Index(out, "CONTROL RUN: every \"bridged\" arm below is a second go-mssqldb connection")
		if control && (at < 0 || at > strings.Index(out, "== Driver")) {
			t.Errorf("control run: the table does not say so before the figures:\n%s", out)
		}
		if !control && at >= 0 {
			t.Errorf("ordinary run: the table calls it a control run:\n%s", out)
		}
	}
}

func TestWriteTableOmitsEmptySections(t *testing.T) {
	r := fakeReport()
	r.Cells = r.CellsOf(report.GroupTransport)
	r.Targets, r.Worse, r.RatiosChecked, r.Idle = nil, nil, 0, nil
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"== Driver", "== Targets", "== Floor", "== Idle"} {
		if strings.Contains(buf.String(), absent) {
			t.Errorf("table has %q without such cells:\n%s", absent, buf.String())
		}
	}
}
