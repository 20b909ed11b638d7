package main

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"sort"
	"sync/atomic"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// workloadPacketSize is the packet size of the workload cells: go-mssqldb's default.
const workloadPacketSize = 4096

// workloadCells returns one cell per workload with the four driver arms on target t (arms the
// -dsn server refuses are left out, as for the value cells). Before the cells are built, each
// workload runs twice on a byte-counting connection (see countBytes) to learn how many TDS bytes
// one operation moves; that count is every arm's byte figure, so "per MiB" means per MiB of TDS
// traffic in the workload's direction.
func workloadCells(ctx context.Context, cfg *config, pool *driverPool, t driverTarget, prog *progress) ([]*cellRunner, error) {
	ws := workloads(cfg.rows, cfg.size)
	if cfg.cells != nil {
		var keep []workload
		for _, w := range ws {
			if cfg.cells.MatchString(report.GroupDriver + " " + w.name) {
				keep = append(keep, w)
			}
		}
		ws = keep
	}
	if len(ws) == 0 {
		return nil, nil
	}
	counted, err := countBytes(ctx, t, ws, prog)
	if err != nil {
		return nil, err
	}
	var cells []*cellRunner
	for i, w := range ws {
		res := &report.Cell{
			Group:      report.GroupDriver,
			Name:       w.name,
			PacketSize: workloadPacketSize,
			Workload:   w.what,
			RoundTrip:  w.roundTrip,
			Unit:       w.unit,
			PerOp:      w.perOp,
			BytesPerOp: counted[i].bytes,
			Counted:    counted[i].how,
		}
		var arms []armRunner
		for _, spec := range cfg.armSpecs(driverArmSpecs) {
			bc, err := pool.get(ctx, t, spec, workloadPacketSize)
			if err != nil {
				if !t.local && plainArmsOptional[spec.name] {
					continue // driverCells has said so for the value cells
				}
				return nil, err
			}
			arms = append(arms, armRunner{spec.name, workloadArm(bc, w, counted[i].bytes)})
		}
		c := newCell(res, arms, report.DriverRatioPairs)
		if w.heavy {
			c.rounds = heavyRounds(cfg.rounds)
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// heavyRounds is the number of rounds a heavy workload cell takes part in: the first half
// (rounded up) of a run's rounds. Its arms still run side by side in each of them; the run keeps
// within its time because one of its operations takes longer than most samples.
func heavyRounds(rounds int) int { return (rounds + 1) / 2 }

// workloadArm returns a sample function that runs w's operation on bc for d; each operation
// counts bytesPerOp bytes. Heavy workloads skip the unmeasured first operation (see measure).
// For latency workloads the sample also carries the p50 and p99 of the operations' wall times.
func workloadArm(bc *benchConn, w workload, bytesPerOp int64) func(context.Context, time.Duration) (report.Sample, error) {
	op := w.newOp(bc)
	var lat []time.Duration // reused from sample to sample
	return func(ctx context.Context, d time.Duration) (report.Sample, error) {
		sctx, cancel := context.WithTimeout(ctx, d+sampleGrace)
		defer cancel()
		prime := !w.heavy
		if !w.latency {
			return measure(sctx, d, 1, prime, func() (int64, error) { return bytesPerOp, op(sctx) })
		}
		lat = lat[:0]
		s, err := measure(sctx, d, 1, prime, func() (int64, error) {
			t0 := time.Now()
			err := op(sctx)
			lat = append(lat, time.Since(t0))
			return bytesPerOp, err
		})
		if err != nil {
			return s, err
		}
		if prime { // the first call was unmeasured: leave it out
			lat = lat[1:]
		}
		s.WallP50, s.WallP99 = latencyPercentiles(lat)
		return s, nil
	}
}

// latencyPercentiles returns the 50th and 99th percentiles of ds (sorted in place).
func latencyPercentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(stats.Quantile(xs, 0.50)), time.Duration(stats.Quantile(xs, 0.99))
}

// byteCount is what countBytes learned about one workload.
type byteCount struct {
	bytes int64  // bytes of one operation in the workload's direction
	how   string // how they were counted, for the table
}

// countBytes opens one go-mssqldb connection (native, encrypt=disable; encrypt=true if the
// server refuses plaintext, then the count includes TLS record overhead) at the workload packet
// size through a dialer that counts the bytes its conn reads and writes, runs each workload once
// to warm it, then once more counted.
func countBytes(ctx context.Context, t driverTarget, ws []workload, prog *progress) ([]byteCount, error) {
	bc, cc, how, err := openCounted(ctx, t, "disable")
	if err != nil && !t.local {
		prog.note("byte count in plaintext: %v; counting through TLS instead", err)
		bc, cc, how, err = openCounted(ctx, t, "true")
	}
	if err != nil {
		return nil, fmt.Errorf("bench: workload byte count: %w", err)
	}
	defer bc.close()
	out := make([]byteCount, len(ws))
	for i, w := range ws {
		op := w.newOp(bc)
		if err := op(ctx); err != nil {
			return nil, fmt.Errorf("bench: %s %s, byte count: %w", report.GroupDriver, w.name, err)
		}
		r0, w0 := cc.read.Load(), cc.written.Load()
		if err := op(ctx); err != nil {
			return nil, fmt.Errorf("bench: %s %s, byte count: %w", report.GroupDriver, w.name, err)
		}
		r, wr := cc.read.Load()-r0, cc.written.Load()-w0
		var n int64
		switch w.dir {
		case dirReceived:
			n = r
		case dirSent:
			n = wr
		default:
			n = r + wr
		}
		if n <= 0 {
			return nil, fmt.Errorf("bench: %s %s, byte count: no bytes %s", report.GroupDriver, w.name, w.dir)
		}
		out[i] = byteCount{bytes: n, how: how + " " + w.dir.String()}
	}
	return out, nil
}

// openCounted opens a native connection with the given encrypt setting at the workload packet
// size through a counting dialer. how says what the count includes.
func openCounted(ctx context.Context, t driverTarget, encrypt string) (*benchConn, *countingDialer, string, error) {
	params := map[string]string{"encrypt": encrypt, "packet size": fmt.Sprint(workloadPacketSize)}
	for k, v := range t.extra {
		params[k] = v
	}
	dsn, err := withParams(t.dsn, params)
	if err != nil {
		return nil, nil, "", err
	}
	cd := &countingDialer{}
	bc, err := openConn(ctx, func(dsn string) (driver.Connector, error) {
		c, err := mssql.NewConnector(dsn)
		if err != nil {
			return nil, err
		}
		c.Dialer = cd
		return c, nil
	}, dsn)
	if err != nil {
		return nil, nil, "", err
	}
	how := "TDS bytes"
	if encrypt != "disable" {
		how = "TLS bytes (TDS plus record overhead)"
	}
	return bc, cd, how, nil
}

// countingDialer dials TCP and counts the bytes every conn it made reads and writes.
type countingDialer struct {
	read, written atomic.Int64
}

// DialContext dials addr and wraps the conn.
func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, d: d}, nil
}

// countingConn adds what it reads and writes to its dialer's counters.
type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.d.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.d.written.Add(int64(n))
	return n, err
}
