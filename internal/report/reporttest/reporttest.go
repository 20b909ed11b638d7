// Package reporttest holds what the tests of package report and of the bench share: a report
// with every kind of cell and known figures, and a way to find a line of a rendered table.
package reporttest

import (
	"strings"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// Arm makes an arm whose round i moved 10 MiB in 10 ops over 50 ms of wall time with
// cpuPerMiB[i] ms of CPU per MiB.
func Arm(name string, cpuPerMiB ...float64) *report.Arm {
	a := &report.Arm{Name: name}
	for i, c := range cpuPerMiB {
		a.Samples = append(a.Samples, report.Sample{
			Round: i + 1,
			Ops:   10,
			Bytes: 10 << 20,
			Wall:  50 * time.Millisecond,
			CPU:   time.Duration(c * 10 * float64(time.Millisecond)),
			Reads: 1290,
		})
	}
	return a
}

// Report returns a report with every kind of cell and known figures, its cells finished:
//   - varbinary/4096: native TLS median 3.1, bridged TLS 2.7 (ratio median 0.87, 5/5 lower),
//     native plain 2.9, bridged plain 2.7 (ratio 0.93);
//   - a sweep cell with TLS arms only (its driver figure comes from varbinary/4096);
//   - workload cells: a round trip with equal arms, narrow rows (6 rounds) with bridged TLS dearer in
//     every round (2.6 against 2.5, p=0.031) and equal plain arms;
//   - a transport cell; floor cells (AES at 1 and 4 KiB, one with a name to escape, and TCP);
//   - idle heap figures: native TLS 112, 110, 114 KiB, bridged TLS 100, 98, 99.
//
// Its Targets, Worse and RatiosChecked are left to the caller.
func Report() *report.Report {
	r := &report.Report{
		Date: "2026-11-30 07:00 UTC", CPUModel: "Test CPU", NumCPU: 2, GOMAXPROCS: 2,
		GoVersion: "go1.26.8", DriverVersion: "v1.11.2", Mode: "all",
		Server: "tdstest", Rounds: 5, Budget: "1m40s", Elapsed: "1m50s", ValueBytes: 1 << 20,
	}
	pairs := map[string][][2]string{
		report.GroupDriver:    report.DriverRatioPairs,
		report.GroupTransport: {{report.ArmBridge, report.ArmTLSConn}},
	}
	cells := []*report.Cell{
		{Group: report.GroupDriver, Name: "varbinary/4096", Value: "varbinary", PacketSize: 4096, Arms: []*report.Arm{
			Arm(report.ArmNativeTLS, 3.0, 3.2, 3.1, 3.3, 2.9),
			Arm(report.ArmBridgedTLS, 2.6, 2.7, 2.8, 2.7, 2.6),
			Arm(report.ArmNativePlain, 2.9, 2.9, 2.8, 3.0, 2.9),
			Arm(report.ArmBridgedPlain, 2.7, 2.7, 2.7, 2.7, 2.7),
		}},
		{Group: report.GroupDriver, Name: "round trip SELECT @p1, @p2", PacketSize: 4096, Workload: "SELECT @p1, @p2", RoundTrip: true,
			Unit: "query", PerOp: 1, BytesPerOp: 1 << 20, Counted: "TDS bytes sent+received", Arms: []*report.Arm{
				Arm(report.ArmNativeTLS, 1, 1, 1, 1, 1),
				Arm(report.ArmBridgedTLS, 1, 1, 1, 1, 1),
				Arm(report.ArmNativePlain, 1, 1, 1, 1, 1),
				Arm(report.ArmBridgedPlain, 1, 1, 1, 1, 1),
			}},
		{Group: report.GroupDriver, Name: "narrow rows x100000", PacketSize: 4096, Workload: "SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)",
			Unit: "row", PerOp: 100000, BytesPerOp: 1 << 20, Counted: "TDS bytes received", Arms: []*report.Arm{
				Arm(report.ArmNativeTLS, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5),
				Arm(report.ArmBridgedTLS, 2.6, 2.6, 2.6, 2.6, 2.6, 2.6),
				Arm(report.ArmNativePlain, 2, 2, 2, 2, 2, 2),
				Arm(report.ArmBridgedPlain, 2, 2, 2, 2, 2, 2),
			}},
		{Group: report.GroupDriver, Name: "varbinary/4096, 1 KiB records", Value: "varbinary", PacketSize: 4096, RecordSize: 1024, Arms: []*report.Arm{
			Arm(report.ArmNativeTLS, 4, 4, 4, 4, 4),
			Arm(report.ArmBridgedTLS, 3, 3, 3, 3, 3),
		}},
		{Group: report.GroupTransport, Name: "1 KiB records, 64 KiB reads", RecordSize: 1024, Pattern: "64 KiB reads", Arms: []*report.Arm{
			Arm(report.ArmTLSConn, 1.5, 1.5, 1.5, 1.5, 1.5),
			Arm(report.ArmBridge, 0.9, 0.9, 0.9, 0.9, 0.9),
		}},
		{Group: report.GroupFloor, Name: "AES <GCM> & co", RecordSize: 1024, Arms: []*report.Arm{Arm(report.ArmFloorAESGCM, 0.2, 0.2, 0.2, 0.2, 0.2)}},
		{Group: report.GroupFloor, Name: "AES 4 KiB", RecordSize: 4096, Arms: []*report.Arm{Arm(report.ArmFloorAESGCM, 0.25, 0.25, 0.25, 0.25, 0.25)}},
		{Group: report.GroupFloor, Name: "TCP", Arms: []*report.Arm{Arm(report.ArmFloorTCP, 0.3, 0.3, 0.3, 0.3, 0.3)}},
	}
	for _, c := range cells {
		c.Finish(pairs[c.Group])
	}
	r.Cells = cells
	r.Idle = []*report.Idle{
		{Arm: report.ArmNativeTLS, Conns: 200, KiB: []float64{112, 110, 114}},
		{Arm: report.ArmBridgedTLS, Conns: 200, KiB: []float64{100, 98, 99}},
	}
	for _, res := range r.Idle {
		res.Summary = stats.Summarize(res.KiB)
	}
	return r
}

// LineWith returns the first line of s that contains every one of subs, or "".
func LineWith(s string, subs ...string) string {
next:
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if !strings.Contains(l, sub) {
				continue next
			}
		}
		return l
	}
	return ""
}
