package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// Fresh-process cells: the varbinary value at each driver packet size again, but every sample
// runs in a client process of its own, started for it (child mode "sample"), connected, warmed
// up for freshWarmup and then measured. In the other driver cells one long-lived process runs
// every arm in turn on one heap, which hides what an arm's allocations do to the garbage
// collector, the scavenger and page faults of the process: the plaintext cost of read-ahead
// buffers a sync.Pool lost between processors showed only in fresh processes (docs/design.md,
// "Memory"). Against the local tdstest child only: its DSN, with the child's own test password,
// is in the sample children's arguments.

// childSample is the child mode that measures one sample of one arm and prints it.
const childSample = "sample"

// freshWarmup is how long a sample child runs the query unmeasured before its sample: the first
// queries of a process grow its heap, which every later one finds grown.
const freshWarmup = 300 * time.Millisecond

// freshCellPrefix starts the name of every fresh-process cell.
const freshCellPrefix = "fresh process "

// freshCells returns the fresh-process cells for the server t; sample children connect to it
// with the DSN each arm would use in this process.
func freshCells(cfg *config, t driverTarget) ([]*cellRunner, error) {
	var cells []*cellRunner
	for _, ps := range driverPacketSizes {
		name := fmt.Sprintf("%s%s/%d", freshCellPrefix, valueVarbinary, ps)
		res := &report.Cell{Group: report.GroupDriver, Name: name, Value: valueVarbinary, PacketSize: ps}
		var arms []armRunner
		for _, spec := range driverArmSpecs {
			dsn, err := t.armDSN(spec, ps)
			if err != nil {
				return nil, err
			}
			arms = append(arms, armRunner{spec.name, freshArm(cfg, spec.name, dsn)})
		}
		cells = append(cells, newCell(res, arms, report.DriverRatioPairs))
	}
	return cells, nil
}

// freshArm returns a sample function that runs one sample of arm in a new child process.
func freshArm(cfg *config, arm, dsn string) func(context.Context, time.Duration) (report.Sample, error) {
	return func(ctx context.Context, d time.Duration) (report.Sample, error) {
		ch, err := startChildWithin(freshWarmup+d+2*sampleGrace, childSample,
			"-arm", arm, "-dsn", dsn, "-duration", d.String(), "-size", strconv.Itoa(cfg.size),
			"-control="+strconv.FormatBool(cfg.control))
		if err != nil {
			return report.Sample{}, err
		}
		s, perr := parseSample(ch.info)
		if err := ch.close(); err != nil {
			return report.Sample{}, err
		}
		return s, perr
	}
}

// sampleResult is what a sample child serves: the sample it measured, as info lines.
type sampleResult report.Sample

// Keys of a sample child's info lines.
const (
	sampleOps   = "ops"
	sampleBytes = "bytes"
	sampleWall  = "wall-ns"
	sampleCPU   = "cpu-ns"
	sampleReads = "read-syscalls"
)

func (s sampleResult) info() map[string]string {
	return map[string]string{
		sampleOps:   strconv.FormatInt(s.Ops, 10),
		sampleBytes: strconv.FormatInt(s.Bytes, 10),
		sampleWall:  strconv.FormatInt(int64(s.Wall), 10),
		sampleCPU:   strconv.FormatInt(int64(s.CPU), 10),
		sampleReads: strconv.FormatInt(s.Reads, 10),
	}
}

// Close does nothing: the sample child has nothing left running once it printed its sample.
func (sampleResult) Close() error { return nil }

// parseSample reads back the info lines of sampleResult.
func parseSample(info map[string]string) (report.Sample, error) {
	var v [5]int64
	for i, k := range []string{sampleOps, sampleBytes, sampleWall, sampleCPU, sampleReads} {
		n, err := strconv.ParseInt(info[k], 10, 64)
		if err != nil {
			return report.Sample{}, fmt.Errorf("bench: sample child: %s: %w", k, err)
		}
		v[i] = n
	}
	return report.Sample{Ops: v[0], Bytes: v[1], Wall: time.Duration(v[2]), CPU: time.Duration(v[3]),
		Reads: v[4]}, nil
}

// startSampleChild is the sample child: it parses "-arm NAME -dsn DSN -duration D -size N
// [-control]", connects the arm (in a control run every arm on go-mssqldb's own transport, as
// config.armSpecs does), runs the varbinary query unmeasured for freshWarmup, then measures it
// for D, and returns the sample.
func startSampleChild(args []string, stderr io.Writer) (childServer, error) {
	fs := flag.NewFlagSet(childSample, flag.ContinueOnError)
	fs.SetOutput(stderr)
	arm := fs.String("arm", "", "driver arm name")
	dsn := fs.String("dsn", "", "DSN of the arm")
	d := fs.Duration("duration", 0, "measured time")
	size := fs.Int("size", 1<<20, "bytes of the value")
	control := fs.Bool("control", false, "control run")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var spec *driverArmSpec
	for _, s := range (&config{control: *control}).armSpecs(driverArmSpecs) {
		if s.name == *arm {
			spec = &s
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("unknown arm %q", *arm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), freshWarmup+*d+2*sampleGrace)
	defer cancel()
	bc, err := openConn(ctx, spec.newConnector, *dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", *arm, err)
	}
	defer bc.close()
	sample := queryArm(bc, valueVarbinary, *size)
	if _, err := sample(ctx, freshWarmup); err != nil {
		return nil, fmt.Errorf("%s: warm-up: %w", *arm, err)
	}
	s, err := sample(ctx, *d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", *arm, err)
	}
	return sampleResult(s), nil
}
