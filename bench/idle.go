package main

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strconv"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// idleCellName names the idle heap figure for -cells ("idle heap per connection").
const idleCellName = "heap per connection"

// measureIdle measures, for each driver arm the -arms pattern keeps, the Go heap that cfg.idleN
// pooled connections hold while idle (see idleHeap), cfg.idleR rounds, the arms in the order
// armOrder gives each round, as the cells run. Plaintext arms that a -dsn server refuses are left
// out with a note.
func measureIdle(ctx context.Context, cfg *config, t driverTarget, prog *progress) ([]*report.Idle, error) {
	var specs []driverArmSpec
	var out []*report.Idle
	for _, s := range cfg.armSpecs(driverArmSpecs) {
		if cfg.arms == nil || cfg.arms.MatchString(s.name) {
			specs = append(specs, s)
			out = append(out, &report.Idle{Arm: s.name, Conns: cfg.idleN})
		}
	}
	skip := make([]bool, len(specs))
	for r := 0; r < cfg.idleR; r++ {
		for _, i := range armOrder(len(specs), r) {
			if skip[i] {
				continue
			}
			prog.note("idle heap, round %d/%d: %d pooled connections, %s", r+1, cfg.idleR, cfg.idleN, specs[i].name)
			kib, err := idleHeap(ctx, t, specs[i], cfg.idleN, cfg.size)
			if err != nil {
				if !t.local && plainArmsOptional[specs[i].name] && r == 0 {
					prog.note("%v; leaving the %s arm out", err, specs[i].name)
					skip[i] = true
					continue
				}
				return out, fmt.Errorf("bench: idle heap, %s, round %d: %w", specs[i].name, r+1, err)
			}
			out[i].KiB = append(out[i].KiB, kib)
		}
	}
	var kept []*report.Idle
	for _, res := range out {
		res.Summary = stats.Summarize(res.KiB)
		if res.Summary.N > 0 {
			kept = append(kept, res)
		}
	}
	return kept, nil
}

// idleHeap opens a pool of n connections of one arm to t at the workload packet size, runs one
// query of a size-byte value on each (checking its length) while all n are open, returns them to
// the pool (idle, none closed: the pool keeps up to n idle), and returns the growth of the live
// Go heap (HeapAlloc after two garbage collections, after minus before) per connection in KiB.
// The pool is closed before it returns.
func idleHeap(ctx context.Context, t driverTarget, spec driverArmSpec, n, size int) (float64, error) {
	params := map[string]string{"encrypt": spec.encrypt, "packet size": strconv.Itoa(workloadPacketSize)}
	for k, v := range t.extra {
		params[k] = v
	}
	dsn, err := withParams(t.dsn, params)
	if err != nil {
		return 0, err
	}
	c, err := spec.newConnector(dsn)
	if err != nil {
		return 0, fmt.Errorf("connector: %w", err)
	}
	q, want := valueQuery(valueVarbinary, size)
	before := liveHeap()
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, cn := range conns {
			_ = cn.Close()
		}
	}()
	qctx, cancel := context.WithTimeout(ctx, sampleGrace)
	defer cancel()
	for i := 0; i < n; i++ {
		cn, err := db.Conn(qctx)
		if err != nil {
			return 0, fmt.Errorf("connection %d: %w", i+1, err)
		}
		conns = append(conns, cn)
		var v sql.RawBytes // dropped at once: the value is not part of the idle heap
		bc := &benchConn{db: db, conn: cn}
		if _, err := bc.queryValue(qctx, q, &v, want, int64(size)); err != nil {
			return 0, fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	for _, cn := range conns {
		if err := cn.Close(); err != nil {
			return 0, fmt.Errorf("return connection to the pool: %w", err)
		}
	}
	conns = conns[:0]
	if st := db.Stats(); st.Idle != n {
		return 0, fmt.Errorf("%d idle connections in the pool, want %d", st.Idle, n)
	}
	after := liveHeap()
	runtime.KeepAlive(db)
	return float64(after-before) / float64(n) / 1024, nil
}

// liveHeap returns the bytes of live heap objects after two garbage collections (the second
// frees what finalizers of the first released).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
