package main

import (
	"time"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// fakeArm makes an arm whose round i moved 10 MiB in 10 ops over 50 ms of wall time with
// cpuPerMiB[i] ms of CPU per MiB.
func fakeArm(name string, cpuPerMiB ...float64) *armResult {
	a := &armResult{Name: name}
	for i, c := range cpuPerMiB {
		a.Samples = append(a.Samples, sample{
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
//   - idle heap figures: native TLS 112, 110, 114 KiB, bridged TLS 100, 98, 99.
func fakeReport() *report {
	r := &report{
		Date: "2026-11-30 07:00 UTC", CPUModel: "Test CPU", NumCPU: 2, GOMAXPROCS: 2,
		GoVersion: "go1.26.8", DriverVersion: "v1.11.2", Mode: modeAll,
		Server: "tdstest", Rounds: 5, Budget: "1m40s", Elapsed: "1m50s", ValueBytes: 1 << 20,
	}
	pairs := map[string][][2]string{
		groupDriver:    driverRatioPairs,
		groupTransport: {{armBridge, armTLSConn}},
	}
	cells := []*cellResult{
		{Group: groupDriver, Name: "varbinary/4096", Value: valueVarbinary, PacketSize: 4096, Arms: []*armResult{
			fakeArm(armNativeTLS, 3.0, 3.2, 3.1, 3.3, 2.9),
			fakeArm(armBridgedTLS, 2.6, 2.7, 2.8, 2.7, 2.6),
			fakeArm(armNativePlain, 2.9, 2.9, 2.8, 3.0, 2.9),
			fakeArm(armBridgedPlain, 2.7, 2.7, 2.7, 2.7, 2.7),
		}},
		{Group: groupDriver, Name: "round trip SELECT @p1, @p2", PacketSize: 4096, Workload: stmtParams, RoundTrip: true,
			Unit: "query", PerOp: 1, BytesPerOp: 1 << 20, Counted: "TDS bytes sent+received", Arms: []*armResult{
				fakeArm(armNativeTLS, 1, 1, 1, 1, 1),
				fakeArm(armBridgedTLS, 1, 1, 1, 1, 1),
				fakeArm(armNativePlain, 1, 1, 1, 1, 1),
				fakeArm(armBridgedPlain, 1, 1, 1, 1, 1),
			}},
		{Group: groupDriver, Name: "narrow rows x100000", PacketSize: 4096, Workload: stmtNarrow,
			Unit: "row", PerOp: 100000, BytesPerOp: 1 << 20, Counted: "TDS bytes received", Arms: []*armResult{
				fakeArm(armNativeTLS, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5),
				fakeArm(armBridgedTLS, 2.6, 2.6, 2.6, 2.6, 2.6, 2.6),
				fakeArm(armNativePlain, 2, 2, 2, 2, 2, 2),
				fakeArm(armBridgedPlain, 2, 2, 2, 2, 2, 2),
			}},
		{Group: groupDriver, Name: "varbinary/4096, 1 KiB records", Value: valueVarbinary, PacketSize: 4096, RecordSize: 1024, Arms: []*armResult{
			fakeArm(armNativeTLS, 4, 4, 4, 4, 4),
			fakeArm(armBridgedTLS, 3, 3, 3, 3, 3),
		}},
		{Group: groupTransport, Name: "1 KiB records, 64 KiB reads", RecordSize: 1024, Pattern: pattern64K, Arms: []*armResult{
			fakeArm(armTLSConn, 1.5, 1.5, 1.5, 1.5, 1.5),
			fakeArm(armBridge, 0.9, 0.9, 0.9, 0.9, 0.9),
		}},
		{Group: groupFloor, Name: "AES <GCM> & co", RecordSize: 1024, Arms: []*armResult{fakeArm(armFloorAESGCM, 0.2, 0.2, 0.2, 0.2, 0.2)}},
		{Group: groupFloor, Name: "AES 4 KiB", RecordSize: 4096, Arms: []*armResult{fakeArm(armFloorAESGCM, 0.25, 0.25, 0.25, 0.25, 0.25)}},
		{Group: groupFloor, Name: "TCP", Arms: []*armResult{fakeArm(armFloorTCP, 0.3, 0.3, 0.3, 0.3, 0.3)}},
	}
	for _, c := range cells {
		c.finish(pairs[c.Group])
	}
	r.Cells = cells
	r.Idle = []*idleResult{
		{Arm: armNativeTLS, Conns: 200, KiB: []float64{112, 110, 114}},
		{Arm: armBridgedTLS, Conns: 200, KiB: []float64{100, 98, 99}},
	}
	for _, res := range r.Idle {
		res.Summary = stats.Summarize(res.KiB)
	}
	r.Targets = checkTargets(r)
	r.Worse = worseCells(r)
	r.RatiosChecked = ratiosChecked(r)
	return r
}
