package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// driverCells sets up the driver comparison: the tdstest child (or the -dsn server), one pinned
// connection per arm and packet size, and the cells: each value type at each packet size with
// the four arms, then (local server only) the record-size sweep with the TLS arms. It returns
// the cells, the server the arms talk to (for the idle heap figure), a description of it, and a
// function that closes the connections and stops the child.
func driverCells(ctx context.Context, cfg *config, prog *progress) (cells []*cellRunner, base driverTarget, server string, closeFn func() error, err error) {
	pool := &driverPool{conns: map[string]*benchConn{}}
	var ch *child
	closeAll := func() error {
		err := pool.close()
		if ch != nil {
			if cerr := ch.close(); err == nil {
				err = cerr
			}
		}
		return err
	}
	defer func() {
		if err != nil {
			_ = closeAll()
		}
	}()
	base = driverTarget{dsn: cfg.dsn}
	var sweep []driverTarget
	if cfg.dsn != "" {
		server = redactDSN(cfg.dsn) + " (from -dsn / MSSQL_DSN)"
	} else {
		sizes := append([]int{0}, sweepRecordSizes...)
		ch, err = startDriverChild(sizes, cfg.verbose)
		if err != nil {
			return nil, base, "", nil, err
		}
		for _, rs := range sizes {
			dsn, err := ch.get(driverInfoKey(rs))
			if err != nil {
				return nil, base, "", nil, err
			}
			t := driverTarget{dsn: dsn, extra: trustLocalServer, recordSize: rs, local: true}
			if rs == 0 {
				base = t
			} else {
				sweep = append(sweep, t)
			}
		}
		server = "tdstest in a child process, encryption setting OFF (encrypt=true gets full TLS, encrypt=disable none), one TLS record per TDS packet"
	}
	left := map[string]bool{} // arms left out, noted once
	for _, value := range []string{valueNVarchar, valueVarbinary} {
		for _, ps := range driverPacketSizes {
			res := &report.Cell{Group: report.GroupDriver, Name: fmt.Sprintf("%s/%d", value, ps), Value: value, PacketSize: ps}
			var arms []armRunner
			for _, spec := range cfg.armSpecs(driverArmSpecs) {
				bc, err := pool.get(ctx, base, spec, ps)
				if err != nil {
					if !base.local && plainArmsOptional[spec.name] {
						if !left[spec.name] { // once per arm: the pool returns the same error again
							prog.note("%s; leaving the %s arm out", strings.TrimPrefix(err.Error(), "bench: "), spec.name)
							left[spec.name] = true
						}
						continue
					}
					return nil, base, "", nil, err
				}
				arms = append(arms, armRunner{spec.name, queryArm(bc, value, cfg.size)})
			}
			cells = append(cells, newCell(res, arms, report.DriverRatioPairs))
		}
	}
	wcells, err := workloadCells(ctx, cfg, pool, base, prog)
	if err != nil {
		return nil, base, "", nil, err
	}
	cells = append(cells, wcells...)
	for _, t := range sweep {
		res := &report.Cell{
			Group:      report.GroupDriver,
			Name:       fmt.Sprintf("%s/%d, %s records", valueVarbinary, sweepPacketSize, report.SizeLabel(t.recordSize)),
			Value:      valueVarbinary,
			PacketSize: sweepPacketSize,
			RecordSize: t.recordSize,
		}
		var arms []armRunner
		for _, spec := range cfg.armSpecs(sweepArmSpecs) {
			bc, err := pool.get(ctx, t, spec, sweepPacketSize)
			if err != nil {
				return nil, base, "", nil, err
			}
			arms = append(arms, armRunner{spec.name, queryArm(bc, valueVarbinary, cfg.size)})
		}
		cells = append(cells, newCell(res, arms, report.DriverRatioPairs))
	}
	if base.local {
		fcells, err := freshCells(cfg, base)
		if err != nil {
			return nil, base, "", nil, err
		}
		cells = append(cells, fcells...)
	}
	return cells, base, server, closeAll, nil
}

// driverInfoKey is the child info key under which the tdstest child prints the DSN of its
// server with TLS record size rs.
func driverInfoKey(rs int) string { return "dsn-rs" + strconv.Itoa(rs) }
