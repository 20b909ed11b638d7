package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// script is perf script output (-F pid,time,period,ip,sym --ns, with call chains) for the
// report of testReport: process 100 is the bench, 200 its server child.
const script = `
     100 10.000000100:     250000 
	ffffffff81000001 _raw_spin_unlock_irqrestore
	          400001 syscall.Syscall
	          400002 main.readA

     100 10.000000200:     250000 
	          400003 main.decode
	          400002 main.readA

     200 10.000000300:     250000 
	          400009 main.serve

     100 20.000000100:     250000 
	          400003 main.decode+0x1f
	          400004 main.readB

     100 20.000000200:     250000 
	          400003 main.decode
	          400004 main.readB

     100 20.000000300:     500000 
	          400005 main.readB

     100 30.000000000:     250000 
	          400006 main.setup
`

// testReport has one cell with arms a (10.0-10.5 s) and b (20.0-20.5 s), 10 operations each.
func testReport() *report.Report {
	return &report.Report{PID: 100, Cells: []*report.Cell{{
		Group: "driver", Name: "cell",
		Arms: []*report.Arm{
			{Name: "a", Samples: []report.Sample{{Ops: 10, Start: 10e9, End: 10e9 + 5e8}}},
			{Name: "b", Samples: []report.Sample{{Ops: 10, Start: 20e9, End: 20e9 + 5e8}}},
		},
		Ratios: []report.Ratio{{Candidate: "b", Baseline: "a"}},
	}}}
}

func TestReadSamples(t *testing.T) {
	var got []sample
	if err := readSamples(strings.NewReader(script), func(s sample) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Fatalf("%d samples, want 7", len(got))
	}
	first := got[0]
	if first.pid != 100 || first.time != 10e9+100 || first.period != 250000 ||
		strings.Join(first.frames, ",") != "_raw_spin_unlock_irqrestore,syscall.Syscall,main.readA" {
		t.Fatalf("first sample = %+v", first)
	}
	if f := got[3].frames[0]; f != "main.decode" {
		t.Fatalf("symbol with offset read as %q", f)
	}
}

func TestReadSamplesErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no period":       "     100 10.000000100:\n",
		"time in seconds": "     100 10.0001: 250000\n",
		"pid":             "     x 10.000000100: 250000\n",
	} {
		t.Run(name, func(t *testing.T) {
			err := readSamples(strings.NewReader(in), func(sample) {})
			if err == nil || !strings.Contains(err.Error(), "perf script line 1") {
				t.Fatalf("err = %v, want one naming line 1", err)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	sp := newSplitter(testReport())
	if err := readSamples(strings.NewReader(script), sp.add); err != nil {
		t.Fatal(err)
	}
	a, b := sp.arms[armKey{"driver cell", "a"}], sp.arms[armKey{"driver cell", "b"}]
	if a.total != 500000 || b.total != 1000000 || sp.outside != 250000 {
		t.Fatalf("a %d ns, b %d ns, outside %d ns; want 500000, 1000000, 250000 (the server's sample left out)", a.total, b.total, sp.outside)
	}
	if got := b.perOp(b.inc["main.readB"]); got != 100 {
		t.Fatalf("readB inclusive = %v us/op, want 100", got)
	}
	ds := diffs(b, a, false, 1)
	if len(ds) != 1 || ds[0].name != "main.readB" || ds[0].candidate != 50 || ds[0].baseline != 0 {
		t.Fatalf("largest self difference = %+v, want main.readB 50 vs 0", ds)
	}
}

func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	b, err := json.Marshal(testReport())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-json", path}, strings.NewReader(script), &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== driver cell", "b - a, us/op, inclusive:", "b - a, us/op, self:", "main.readB", "outside every measured sample"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	// A report without clock times is refused, naming why.
	rep := testReport()
	for _, a := range rep.Cells[0].Arms {
		a.Samples[0].Start, a.Samples[0].End = 0, 0
	}
	b, _ = json.Marshal(rep)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-json", path}, strings.NewReader(script), &out, &out); err == nil || !strings.Contains(err.Error(), "no sample has a clock time") {
		t.Fatalf("report without clock times: %v", err)
	}
}
