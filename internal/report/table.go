package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// WriteTable prints the report to w as readable tables: the run's context, the driver value cells
// (per arm, then a summary with ratios, then the transport's part of the TLS figures), the
// workload cells, the idle heap figure, the targets, the transport-only comparison, the floor,
// and last the verdict (writeRunVerdict), what a reader of the run's end sees. Sections without
// cells are left out.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("tdsbridge bench, %s\n", r.Date)
	p("machine: %s, %d CPUs, GOMAXPROCS %d, %s; driver: go-mssqldb %s\n", r.CPUModel, r.NumCPU, r.GOMAXPROCS, r.GoVersion, r.DriverVersion)
	p("run: mode %s, %d rounds, budget %s, took %s\n", r.Mode, r.Rounds, r.Budget, r.Elapsed)
	if r.Server != "" {
		p("driver server: %s\n", r.Server)
	}
	if r.Control {
		p("CONTROL RUN: every \"bridged\" arm below is a second go-mssqldb connection with its own transport;\n")
		p("each ratio compares two identical arms, so it shows the measurement's noise, not the bridge\n")
	}
	p("figures: median over rounds %s; client CPU = user+system time of this process (servers run in a child);\n", spreadNote(r.Rounds))
	p("reads/MiB = read system calls of this process per MiB received (median)\n")
	var values, loads []*Cell
	for _, c := range r.CellsOf(GroupDriver) {
		if c.Workload != "" {
			loads = append(loads, c)
		} else {
			values = append(values, c)
		}
	}
	if len(values) > 0 {
		writeValueCells(p, r, values)
	}
	if len(loads) > 0 {
		writeWorkloadCells(p, loads)
	}
	if len(r.Idle) > 0 {
		writeIdle(p, r)
	}
	if len(r.Targets) > 0 || r.RatiosChecked > 0 {
		writeTargets(p, r)
	}
	if cells := r.CellsOf(GroupTransport); len(cells) > 0 {
		p("\n== Transport only: TLS 1.2 AES-128-GCM over loopback, sender in a child process ==\n")
		p("x floor = CPU ms/MB over the floor for the record size (AES-128-GCM open + loopback TCP read)\n")
		p("cell\tarm\tMB/s\tCPU ms/MB\tx floor\treads/MiB\tCPU ratio bridge/tls.Conn\n")
		for _, c := range cells {
			for i, a := range c.Arms {
				rat, xf := "", "-"
				if a.Name == ArmBridge || a.Name == ArmBridgeCoalesce {
					rat = fmtRatio(c.RatioOf(a.Name, ArmTLSConn))
				}
				if f := r.Floor(c.RecordSize); f > 0 && a.CPUPerMB.N > 0 {
					xf = fmt.Sprintf("%.2fx", a.CPUPerMB.Median/f)
				}
				p("%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.rowName(i), a.Name, fmtStat(a.MBps), fmtStat(a.CPUPerMB), xf, fmtMedian(a.Reads), rat)
			}
		}
	}
	if cells := r.CellsOf(GroupFloor); len(cells) > 0 {
		p("\n== Floor: the least a TLS read over loopback can cost ==\n")
		p("what\tCPU ms/MB\tMB/s\treads/MiB\n")
		for _, c := range cells {
			for _, a := range c.Arms {
				p("%s\t%s\t%s\t%s\n", c.Name, fmtStat(a.CPUPerMB), fmtStat(a.MBps), fmtMedian(a.Reads))
			}
		}
	}
	if r.Verdict != nil {
		writeRunVerdict(p, r)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

// printer is WriteTable's formatted writer.
type printer func(format string, args ...any)

// rowName is the first column of the table row of the cell's i-th arm: the cell's name on its
// first row, empty below it.
func (c *Cell) rowName(i int) string {
	if i == 0 {
		return c.Name
	}
	return ""
}

// writeValueCells prints the driver value cells: per arm, the summary with ratios, and the
// transport's part of each TLS figure (see transportPart).
func writeValueCells(p printer, r *Report, cells []*Cell) {
	p("\n== Driver: one SELECT of a %s value per query, one connection ==\n", ByteLabel(r.ValueBytes))
	p("packet sizes as requested; servers cap encrypted connections at 16383, as SQL Server does\n")
	p("cell\tarm\tqueries\twall ms/query\tCPU ms/query\tCPU ms/MiB\treads/MiB\n")
	for _, c := range cells {
		for i, a := range c.Arms {
			p("%s\t%s\t%d\t%s\t%s\t%s\t%s\n", c.rowName(i), a.Name, totalOps(a), fmtStat(a.Wall), fmtStat(a.CPU), fmtStat(a.CPUPerMiB), fmtMedian(a.Reads))
		}
	}
	p("\n== Driver summary: client CPU ms/MiB (medians), ratios bridged/native ==\n")
	p("ratio = median of per-round ratios [spread], rounds in which bridged was cheaper, sign-test p\n")
	p("cell\tnative TLS\tbridged TLS\tnative plain\tbridged plain\tratio TLS\tratio plain\n")
	for _, c := range cells {
		p("%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name,
			armMedian(c, ArmNativeTLS), armMedian(c, ArmBridgedTLS),
			armMedian(c, ArmNativePlain), armMedian(c, ArmBridgedPlain),
			fmtRatio(c.RatioOf(ArmBridgedTLS, ArmNativeTLS)), fmtRatio(c.RatioOf(ArmBridgedPlain, ArmNativePlain)))
	}
	p("\n== Driver: the transport's part of the TLS figures, ms/MiB (from medians: descriptive; the ratios are the evidence) ==\n")
	p("driver = cheaper plain arm - TCP read floor (an upper bound of the driver's own work); transport = TLS arm - driver;\n")
	p("share = transport / TLS arm; x floor = transport / floor; gain taken = (native - bridged) / (native - floor), transports\n")
	p("cell\tfloor\tdriver\tnative transport (share)\tbridged transport (share)\tnative x floor\tbridged x floor\tgain taken\n")
	for _, c := range cells {
		tp := transportPart(r, c)
		p("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, fmtPos(tp.floor), fmtPos(tp.driver),
			fmtShare(tp.native, tp.nativeTLS), fmtShare(tp.bridged, tp.bridgedTLS),
			fmtTimes(tp.native, tp.floor), fmtTimes(tp.bridged, tp.floor), fmtTaken(tp))
	}
}

// writeWorkloadCells prints the workload cells (at least one; they share one packet size): what
// each does, per arm, and a summary with ratios.
func writeWorkloadCells(p printer, cells []*Cell) {
	p("\n== Driver workloads: packet size %d, one pinned connection per arm, every answer checked ==\n", cells[0].PacketSize)
	for _, c := range cells {
		p("%s: %s; %s per operation (%s)\n", c.Name, c.Workload, byteCountLabel(c.BytesPerOp), c.Counted)
	}
	p("cell\tarm\tops\twall ms/op\tp50 ms\tp99 ms\tCPU us/unit\tCPU ms/MiB\treads/MiB\n")
	for _, c := range cells {
		for i, a := range c.Arms {
			perUnit := "-"
			if a.CPU.N > 0 && c.PerOp > 0 {
				perUnit = fmtNum(1000*a.CPU.Median/float64(c.PerOp)) + "/" + c.Unit
			}
			p("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.rowName(i), a.Name, totalOps(a), fmtStat(a.Wall),
				fmtMedian(a.WallP50), fmtMedian(a.WallP99), perUnit, fmtStat(a.CPUPerMiB), fmtMedian(a.Reads))
		}
	}
	p("\n== Driver workloads summary: ratios bridged/native of client CPU per operation ==\n")
	p("cell\tratio TLS\tratio plain\n")
	for _, c := range cells {
		p("%s\t%s\t%s\n", c.Name, fmtRatio(c.RatioOf(ArmBridgedTLS, ArmNativeTLS)), fmtRatio(c.RatioOf(ArmBridgedPlain, ArmNativePlain)))
	}
}

// writeIdle prints the idle heap figure per arm and the paired ratios bridged/native.
func writeIdle(p printer, r *Report) {
	n := r.Idle[0].Conns
	p("\n== Idle: Go heap per pooled connection, %d connections each idle after one %s query ==\n", n, ByteLabel(r.ValueBytes))
	p("heap = HeapAlloc after GC with the pool idle, minus before opening it, / %d; ratio per round, bridged/native\n", n)
	p("arm\tKiB per connection\trounds\tratio bridged/native\n")
	kib := map[string][]float64{}
	for _, res := range r.Idle {
		kib[res.Arm] = res.KiB
	}
	for _, res := range r.Idle {
		rat := ""
		for _, pair := range DriverRatioPairs {
			if pair[0] == res.Arm && kib[pair[1]] != nil {
				q := Ratio{Ratio: stats.PairedRatio(res.KiB, kib[pair[1]])}
				rat = fmtRatio(&q)
			}
		}
		p("%s\t%s\t%d\t%s\n", res.Arm, fmtStat(res.Summary), res.Summary.N, rat)
	}
}

// writeTargets prints every target with its figures and outcome, then the guard: no judged
// ratio of the table dearer than its baseline for the run as a whole (Holm-adjusted p < 0.05,
// the verdict's "makes worse"), with the ratios dearer with p < 0.05 on their own listed as such.
func writeTargets(p printer, r *Report) {
	p("\n== Targets: the decided goals, judged as the verdict judges ==\n")
	p("not worse: not dearer with Holm-adjusted p < 0.05 over the run's %d judged ratios (no limit on the median);\n", r.RatiosChecked)
	p("gain: median at or below the limit, and better than the bound in >= 75%% of rounds or sign test p < 0.05;\n")
	if r.Verdict != nil {
		p("fewer than %d rounds: not judged\n", r.Verdict.MinRounds)
	}
	for _, t := range r.Targets {
		v := t.Measured
		lo, hi := v.Spread()
		holm, goal := "", "not worse"
		switch t.Kind {
		case TargetNotWorse:
			holm = ", Holm-adjusted p=" + FormatP(v.HolmP)
		case TargetGain:
			goal = fmt.Sprintf("<= %.2f (gain)", t.Limit)
		}
		outcome := v.Outcome.String()
		if v.Why != "" {
			outcome += ": " + v.Why
		}
		p("%s = %.3f [%.2f-%.2f], better %d/%d, p=%s%s; target %s: %s\n", t.Name, v.Median, lo, hi,
			v.Better, v.N, FormatP(v.P), holm, goal, outcome)
	}
	if r.RatiosChecked == 0 {
		return
	}
	var run, alone []WorseCell
	for _, wc := range r.Worse {
		if wc.ForRun {
			run = append(run, wc)
		} else {
			alone = append(alone, wc)
		}
	}
	if len(run) == 0 {
		p("no ratio dearer than its baseline for the run as a whole (Holm-adjusted p < 0.05 over %d ratios, plaintext included): MET\n", r.RatiosChecked)
	} else {
		p("no ratio dearer than its baseline for the run as a whole (Holm-adjusted p < 0.05 over %d ratios): NOT MET, %d dearer:\n", r.RatiosChecked, len(run))
		writeWorseCells(p, run)
	}
	if len(alone) > 0 {
		p("  dearer with p < 0.05 on its own only, not for the run (chance does that about once in 40 ratios):\n")
		writeWorseCells(p, alone)
	}
}

// writeWorseCells prints one line per ratio with its Holm-adjusted p-value.
func writeWorseCells(p printer, wcs []WorseCell) {
	for _, wc := range wcs {
		p("  %s: %s/%s = %s, Holm-adjusted p=%s\n", wc.Cell, wc.Ratio.Candidate, wc.Ratio.Baseline, fmtRatio(&wc.Ratio), FormatP(wc.HolmP))
	}
}

// Floor returns the floor of a TLS read of records of recordSize bytes over loopback: the
// median CPU ms/MB of AES-128-GCM open at that record size plus that of the plain TCP read, from
// the report's floor cells; 0 if either was not measured.
func (r *Report) Floor(recordSize int) float64 {
	aes, tcp := floorParts(r, recordSize)
	if aes == 0 || tcp == 0 {
		return 0
	}
	return aes + tcp
}

// spreadNote says which spread the table shows for n rounds.
func spreadNote(n int) string {
	if n < stats.MinQuartileN {
		return "[min-max]"
	}
	return "[p25-p75]"
}

// totalOps is the number of operations over all of the arm's samples.
func totalOps(a *Arm) int64 {
	var n int64
	for _, s := range a.Samples {
		n += s.Ops
	}
	return n
}

// fmtStat formats a summary as "median [lo-hi]", or "-" when empty.
func fmtStat(s stats.Summary) string {
	if s.N == 0 {
		return "-"
	}
	lo, hi := s.Spread()
	return fmt.Sprintf("%s [%s-%s]", fmtNum(s.Median), fmtNum(lo), fmtNum(hi))
}

// fmtMedian formats the median alone, or "-" when empty.
func fmtMedian(s stats.Summary) string {
	if s.N == 0 {
		return "-"
	}
	return fmtNum(s.Median)
}

// fmtNum formats x with about three significant digits.
func fmtNum(x float64) string {
	switch {
	case x >= 100 || x <= -100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10 || x <= -10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// fmtRatio formats a paired ratio as "0.87 [0.85-0.90] 9/10 p=0.021", or "-" when absent.
func fmtRatio(q *Ratio) string {
	if q == nil || q.N == 0 {
		return "-"
	}
	lo, hi := q.Spread()
	return fmt.Sprintf("%.2f [%.2f-%.2f] %d/%d p=%s", q.Median, lo, hi, q.Lower, q.N, FormatP(q.P))
}

// FormatP formats a p-value compactly: "<0.001", or at most three decimals without trailing
// zeros ("0.062", "1").
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", p), "0"), ".")
}

// armMedian formats the median CPU ms/MiB of the cell's arm, or "-".
func armMedian(c *Cell, name string) string {
	a := c.Arm(name)
	if a == nil || a.CPUPerMiB.N == 0 {
		return "-"
	}
	return fmtNum(a.CPUPerMiB.Median)
}
