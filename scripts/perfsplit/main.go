// Command perfsplit splits a perf profile of a bench run by cell and arm, kernel included, and
// shows where two arms measured side by side differ, in microseconds per operation.
//
// go tool pprof can split the bench's -cpuprofile by arm (its samples carry the labels cell and
// arm), but Go's profiler sees only what runs on the goroutines of the arm: not the kernel's
// part of a system call by function, not the scheduler, not the return from a wait. perf sees
// all of it but knows nothing of arms; the bench keeps every sample's start and end on perf's
// clock in its -json output (clock_start_ns, clock_end_ns), and this command puts each perf
// sample of the bench process into the arm that was running at the time:
//
//	go build -o /tmp/bench ./bench
//	perf record -k CLOCK_MONOTONIC -e cpu-clock -F 4000 -g -o perf.data -- \
//	    /tmp/bench -mode driver -cells 'round trip SELECT' -arms TLS -rounds 30 -json run.json
//	perf script -i perf.data -F pid,time,period,ip,sym --ns | go run ./scripts/perfsplit -json run.json
//
// Use -e cpu-clock: its period is time in ns, which is what the figures add up. The servers run
// in a child process and are left out. Linux only (perf, and the clock the bench reads); the
// kernel's part needs root or kernel.perf_event_paranoid at 1 or below.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"text/tabwriter"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
}

// run reads the bench report named by -json and perf script output from in, and writes the
// split to out.
func run(args []string, in io.Reader, out, stderr io.Writer) error {
	fs := flag.NewFlagSet("perfsplit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonPath := fs.String("json", "", "the bench run's -json `FILE` (required)")
	cellsRe := fs.String("cells", "", "only the cells whose \"group name\" matches this `regexp`")
	top := fs.Int("top", 20, "functions listed per comparison, the largest differences first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *jsonPath == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("perfsplit: usage: perf script -F pid,time,period,ip,sym --ns | perfsplit -json FILE")
	}
	cells, err := regexp.Compile(*cellsRe)
	if err != nil {
		return fmt.Errorf("perfsplit: -cells: %w", err)
	}
	rep, err := readReport(*jsonPath)
	if err != nil {
		return err
	}
	sp := newSplitter(rep)
	if sp == nil {
		return fmt.Errorf("perfsplit: %s: no sample has a clock time (a run on Linux with this bench writes them)", *jsonPath)
	}
	if err := readSamples(in, sp.add); err != nil {
		return err
	}
	for _, c := range rep.Cells {
		if name := c.Group + " " + c.Name; cells.MatchString(name) {
			printCell(out, sp, c, *top)
		}
	}
	fmt.Fprintf(out, "outside every measured sample (set-up, warm-up, between samples): %.1f s\n", float64(sp.outside)/1e9)
	return nil
}

// readReport reads a bench -json file.
func readReport(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("perfsplit: %w", err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("perfsplit: %s: %w", path, err)
	}
	return &rep, nil
}

// printCell prints the profiled time per operation of every arm of c, then, for each of its
// ratios, the functions whose cost per operation differs most between the two arms, counted
// inclusive and self.
func printCell(out io.Writer, sp *splitter, c *report.Cell, top int) {
	name := c.Group + " " + c.Name
	fmt.Fprintf(out, "== %s\n", name)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "arm\tops\tprofiled s\tus/op")
	for _, a := range c.Arms {
		p := sp.arms[armKey{name, a.Name}]
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\n", a.Name, p.ops, float64(p.total)/1e9, p.perOp(p.total))
	}
	_ = tw.Flush()
	for _, r := range c.Ratios {
		cand, base := sp.arms[armKey{name, r.Candidate}], sp.arms[armKey{name, r.Baseline}]
		if cand == nil || base == nil || cand.total == 0 || base.total == 0 {
			continue
		}
		for _, inclusive := range []bool{true, false} {
			kind := "self"
			if inclusive {
				kind = "inclusive"
			}
			fmt.Fprintf(out, "%s - %s, us/op, %s:\n", r.Candidate, r.Baseline, kind)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
			ds := diffs(cand, base, inclusive, top)
			sort.SliceStable(ds, func(i, j int) bool { return ds[i].candidate-ds[i].baseline > ds[j].candidate-ds[j].baseline })
			for _, d := range ds {
				fmt.Fprintf(tw, "%+.2f\t%.2f\t%.2f\t  %s\n", d.candidate-d.baseline, d.candidate, d.baseline, d.name)
			}
			_ = tw.Flush()
		}
	}
}
