package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeTable prints the report as readable tables: the run's context, the driver comparison
// (per arm, then a summary with ratios and the transport share), the issue 8 targets, the
// transport-only comparison and the floor. Sections without cells are left out.
func writeTable(w io.Writer, r *report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("tdsbridge bench, %s\n", r.Date)
	p("machine: %s, %d CPUs, GOMAXPROCS %d, %s; driver: go-mssqldb %s\n", r.CPUModel, r.NumCPU, r.GOMAXPROCS, r.GoVersion, r.DriverVersion)
	p("run: mode %s, %d rounds, budget %s, took %s\n", r.Mode, r.Rounds, r.Budget, r.Elapsed)
	if r.Server != "" {
		p("driver server: %s\n", r.Server)
	}
	p("figures: median over rounds %s; client CPU = user+system time of this process (servers run in a child);\n", spreadNote(r.Rounds))
	p("reads/MiB = read system calls of this process per MiB received (median)\n")
	if cells := r.cellsOf(groupDriver); len(cells) > 0 {
		p("\n== Driver: one SELECT of a %s value per query, one connection ==\n", byteLabel(r.ValueBytes))
		p("packet sizes as requested; servers cap encrypted connections at 16383, as SQL Server does\n")
		p("cell\tarm\tqueries\twall ms/query\tCPU ms/query\tCPU ms/MiB\treads/MiB\n")
		for _, c := range cells {
			for i, a := range c.Arms {
				name := ""
				if i == 0 {
					name = c.Name
				}
				p("%s\t%s\t%d\t%s\t%s\t%s\t%s\n", name, a.Name, totalOps(a), fmtStat(a.Wall), fmtStat(a.CPU), fmtStat(a.CPUPerMiB), fmtMedian(a.Reads))
			}
		}
		p("\n== Driver summary: client CPU ms/MiB (medians), ratios bridged/native ==\n")
		p("ratio = median of per-round ratios [spread], rounds in which bridged was cheaper, sign-test p\n")
		p("share = transport share of the TLS figure: (TLS - plain) / TLS\n")
		p("cell\tnative TLS\tbridged TLS\tnative plain\tbridged plain\tratio TLS\tratio plain\tshare native\tshare bridged\n")
		for _, c := range cells {
			p("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name,
				armMedian(c, armNativeTLS), armMedian(c, armBridgedTLS),
				armMedian(c, armNativePlain), armMedian(c, armBridgedPlain),
				fmtRatio(c.ratioOf(armBridgedTLS, armNativeTLS)), fmtRatio(c.ratioOf(armBridgedPlain, armNativePlain)),
				transportShare(c, armNativeTLS, armNativePlain), transportShare(c, armBridgedTLS, armBridgedPlain))
		}
	}
	if len(r.Targets) > 0 {
		p("\n== Targets (issue 8), client CPU per MiB ==\n")
		for _, t := range r.Targets {
			verdict := "MET"
			if !t.Met {
				verdict = "NOT MET"
			}
			p("%s: %s / %s = %.3f (%s), target <= %.2f: %s\n", t.Cell, t.Candidate, t.Baseline, t.Measured,
				fmtRatio(&ratioResult{ratio: t.Ratio}), t.Limit, verdict)
		}
	}
	if cells := r.cellsOf(groupTransport); len(cells) > 0 {
		p("\n== Transport only: TLS 1.2 AES-128-GCM over loopback, sender in a child process ==\n")
		p("x floor = CPU ms/MB over the floor for the record size (AES-128-GCM open + loopback TCP read)\n")
		p("cell\tarm\tMB/s\tCPU ms/MB\tx floor\treads/MiB\tCPU ratio bridge/tls.Conn\n")
		for _, c := range cells {
			for i, a := range c.Arms {
				name, rat, xf := "", "", "-"
				if i == 0 {
					name = c.Name
				}
				if a.Name == armBridge {
					rat = fmtRatio(c.ratioOf(armBridge, armTLSConn))
				}
				if f := floorFor(r, c.RecordSize); f > 0 && a.CPUPerMB.N > 0 {
					xf = fmt.Sprintf("%.1fx", a.CPUPerMB.Median/f)
				}
				p("%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, a.Name, fmtStat(a.MBps), fmtStat(a.CPUPerMB), xf, fmtMedian(a.Reads), rat)
			}
		}
	}
	if cells := r.cellsOf(groupFloor); len(cells) > 0 {
		p("\n== Floor: the least a TLS read over loopback can cost ==\n")
		p("what\tCPU ms/MB\tMB/s\treads/MiB\n")
		for _, c := range cells {
			for _, a := range c.Arms {
				p("%s\t%s\t%s\t%s\n", c.Name, fmtStat(a.CPUPerMB), fmtStat(a.MBps), fmtMedian(a.Reads))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: write table: %w", err)
	}
	return nil
}

// floorFor returns the floor of a TLS read of records of recordSize bytes over loopback: the
// median CPU ms/MB of AES-128-GCM open at that record size plus that of the plain TCP read;
// 0 if either was not measured.
func floorFor(r *report, recordSize int) float64 {
	var aes, tcp float64
	for _, c := range r.cellsOf(groupFloor) {
		for _, a := range c.Arms {
			switch {
			case a.Name == armFloorAESGCM && c.RecordSize == recordSize && a.CPUPerMB.N > 0:
				aes = a.CPUPerMB.Median
			case a.Name == armFloorTCP && a.CPUPerMB.N > 0:
				tcp = a.CPUPerMB.Median
			}
		}
	}
	if aes == 0 || tcp == 0 {
		return 0
	}
	return aes + tcp
}

// spreadNote says which spread the table shows for n rounds.
func spreadNote(n int) string {
	if n < minQuartileN {
		return "[min-max]"
	}
	return "[p25-p75]"
}

// totalOps is the number of operations over all of the arm's samples.
func totalOps(a *armResult) int64 {
	var n int64
	for _, s := range a.Samples {
		n += s.Ops
	}
	return n
}

// fmtStat formats a summary as "median [lo-hi]", or "-" when empty.
func fmtStat(s summary) string {
	if s.N == 0 {
		return "-"
	}
	lo, hi := s.spread()
	return fmt.Sprintf("%s [%s-%s]", fmtNum(s.Median), fmtNum(lo), fmtNum(hi))
}

// fmtMedian formats the median alone, or "-" when empty.
func fmtMedian(s summary) string {
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
func fmtRatio(q *ratioResult) string {
	if q == nil || q.N == 0 {
		return "-"
	}
	lo, hi := q.spread()
	return fmt.Sprintf("%.2f [%.2f-%.2f] %d/%d p=%s", q.Median, lo, hi, q.Lower, q.N, fmtP(q.P))
}

// fmtP formats a p-value compactly.
func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", p), "0"), ".")
}

// armMedian formats the median CPU ms/MiB of the cell's arm, or "-".
func armMedian(c *cellResult, name string) string {
	a := c.arm(name)
	if a == nil || a.CPUPerMiB.N == 0 {
		return "-"
	}
	return fmtNum(a.CPUPerMiB.Median)
}

// transportShare formats (TLS - plain) / TLS of the medians of CPU per MiB as a percentage.
func transportShare(c *cellResult, tlsArm, plainArm string) string {
	t, pl := c.arm(tlsArm), c.arm(plainArm)
	if t == nil || pl == nil || t.CPUPerMiB.N == 0 || pl.CPUPerMiB.N == 0 || t.CPUPerMiB.Median <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*(t.CPUPerMiB.Median-pl.CPUPerMiB.Median)/t.CPUPerMiB.Median)
}
