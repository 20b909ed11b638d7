package report

import (
	"time"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// fakeArm makes an arm whose round i moved 10 MiB in 10 ops over 50 ms of wall time with
// cpuPerMiB[i] ms of CPU per MiB.
func fakeArm(name string, cpuPerMiB ...float64) *Arm {
	a := &Arm{Name: name}
	for i, c := range cpuPerMiB {
		a.Samples = append(a.Samples, Sample{
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

// fakeReport is a report with every kind of cell and known figures:
//   - varbinary/4096: native TLS median 3.1, bridged TLS 2.7 (ratio median 0.87, 5/5 lower),
//     native plain 2.9, bridged plain 2.7 (ratio 0.93);
//   - a sweep cell with TLS arms only (its driver figure comes from varbinary/4096);
//   - workload cells: a round trip with equal arms, narrow rows (6 rounds) with bridged TLS dearer in
//     every round (2.6 against 2.5, p=0.031) and equal plain arms;
//   - a transport cell; floor cells (AES at 1 and 4 KiB, one with a name to escape, and TCP);
//   - idle heap figures: native TLS 112, 110, 114 KiB, bridged TLS 100, 98, 99;
//   - one target (bridged plain/native plain of varbinary/4096 at most 0.90, a gain) with the
//     verdict bench gives five rounds, and every ratio worse with p < 0.05 (narrow rows TLS).
func fakeReport() *Report {
	r := &Report{
		Date: "2026-11-30 07:00 UTC", CPUModel: "Test CPU", NumCPU: 2, GOMAXPROCS: 2,
		GoVersion: "go1.26.8", DriverVersion: "v1.11.2", Mode: "all",
		Server: "tdstest", Rounds: 5, Budget: "1m40s", Elapsed: "1m50s", ValueBytes: 1 << 20,
	}
	pairs := map[string][][2]string{
		GroupDriver:    DriverRatioPairs,
		GroupTransport: {{ArmBridge, ArmTLSConn}},
	}
	cells := []*Cell{
		{Group: GroupDriver, Name: "varbinary/4096", Value: "varbinary", PacketSize: 4096, Arms: []*Arm{
			fakeArm(ArmNativeTLS, 3.0, 3.2, 3.1, 3.3, 2.9),
			fakeArm(ArmBridgedTLS, 2.6, 2.7, 2.8, 2.7, 2.6),
			fakeArm(ArmNativePlain, 2.9, 2.9, 2.8, 3.0, 2.9),
			fakeArm(ArmBridgedPlain, 2.7, 2.7, 2.7, 2.7, 2.7),
		}},
		{Group: GroupDriver, Name: "round trip SELECT @p1, @p2", PacketSize: 4096, Workload: "SELECT @p1, @p2", RoundTrip: true,
			Unit: "query", PerOp: 1, BytesPerOp: 1 << 20, Counted: "TDS bytes sent+received", Arms: []*Arm{
				fakeArm(ArmNativeTLS, 1, 1, 1, 1, 1),
				fakeArm(ArmBridgedTLS, 1, 1, 1, 1, 1),
				fakeArm(ArmNativePlain, 1, 1, 1, 1, 1),
				fakeArm(ArmBridgedPlain, 1, 1, 1, 1, 1),
			}},
		{Group: GroupDriver, Name: "narrow rows x100000", PacketSize: 4096, Workload: "SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)",
			Unit: "row", PerOp: 100000, BytesPerOp: 1 << 20, Counted: "TDS bytes received", Arms: []*Arm{
				fakeArm(ArmNativeTLS, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5),
				fakeArm(ArmBridgedTLS, 2.6, 2.6, 2.6, 2.6, 2.6, 2.6),
				fakeArm(ArmNativePlain, 2, 2, 2, 2, 2, 2),
				fakeArm(ArmBridgedPlain, 2, 2, 2, 2, 2, 2),
			}},
		{Group: GroupDriver, Name: "varbinary/4096, 1 KiB records", Value: "varbinary", PacketSize: 4096, RecordSize: 1024, Arms: []*Arm{
			fakeArm(ArmNativeTLS, 4, 4, 4, 4, 4),
			fakeArm(ArmBridgedTLS, 3, 3, 3, 3, 3),
		}},
		{Group: GroupTransport, Name: "1 KiB records, 64 KiB reads", RecordSize: 1024, Pattern: "64 KiB reads", Arms: []*Arm{
			fakeArm(ArmTLSConn, 1.5, 1.5, 1.5, 1.5, 1.5),
			fakeArm(ArmBridge, 0.9, 0.9, 0.9, 0.9, 0.9),
		}},
		{Group: GroupFloor, Name: "AES <GCM> & co", RecordSize: 1024, Arms: []*Arm{fakeArm(ArmFloorAESGCM, 0.2, 0.2, 0.2, 0.2, 0.2)}},
		{Group: GroupFloor, Name: "AES 4 KiB", RecordSize: 4096, Arms: []*Arm{fakeArm(ArmFloorAESGCM, 0.25, 0.25, 0.25, 0.25, 0.25)}},
		{Group: GroupFloor, Name: "TCP", Arms: []*Arm{fakeArm(ArmFloorTCP, 0.3, 0.3, 0.3, 0.3, 0.3)}},
	}
	for _, c := range cells {
		c.Finish(pairs[c.Group])
	}
	r.Cells = cells
	r.Idle = []*Idle{
		{Arm: ArmNativeTLS, Conns: 200, KiB: []float64{112, 110, 114}},
		{Arm: ArmBridgedTLS, Conns: 200, KiB: []float64{100, 98, 99}},
	}
	for _, res := range r.Idle {
		res.Summary = stats.Summarize(res.KiB)
	}
	// The plain target of varbinary/4096: every round's bridged plain over native plain is below 1.
	c := cells[0]
	var rs []float64
	for i, s := range c.Arm(ArmBridgedPlain).Samples {
		rs = append(rs, s.CPUMsPerMiB()/c.Arm(ArmNativePlain).Samples[i].CPUMsPerMiB())
	}
	r.Targets = []Target{{
		Name: "varbinary/4096: bridged plain/native plain, CPU per MiB", Kind: TargetGain, Limit: 0.90, Bound: 1,
		Measured: Verdict{Summary: stats.Summarize(rs), Better: len(rs), P: stats.SignTestP(len(rs), len(rs)),
			Why: "too few rounds (5 < 10) for a verdict; median 0.931 above the limit 0.90"},
	}}
	for _, c := range cells {
		for _, q := range c.Ratios {
			if q.N == 0 {
				continue
			}
			r.RatiosChecked++
			if q.Higher > q.Lower && q.P < 0.05 {
				r.Worse = append(r.Worse, WorseCell{Cell: c.Group + " " + c.Name, Ratio: q})
			}
		}
	}
	return r
}
