package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// sampleGrace bounds how long a sample may overrun its slice, and how long connecting an arm may
// take: a stalled server or transport then fails the run with an error naming the arm, instead
// of hanging it.
const sampleGrace = 30 * time.Second

// errNoProgress reports a sample in which the operation moved no bytes.
var errNoProgress = errors.New("bench: measured operation moved no bytes")

// measureFor runs op once unmeasured (so that the sample does not pay for regrowing a heap the
// runtime gave back while other arms ran, or for a cold connection), collects garbage, then runs
// op repeatedly for about d (at least once) and measures the client: wall time and process CPU
// from before the first measured call to after the last. op returns the payload bytes it moved.
// The clock is checked after every batch calls of op (batch < 1 counts as 1), so that cheap
// operations do not pay for reading it. ctx is checked between batches.
func measureFor(ctx context.Context, d time.Duration, batch int, op func() (int64, error)) (report.Sample, error) {
	return measure(ctx, d, batch, true, op)
}

// measure is measureFor with the unmeasured first operation optional (prime). Operations that
// take a tenth of a second or more (heavy workloads) skip it: one of them costs more than the
// cold start it would absorb, and a sample of them is often a single operation.
func measure(ctx context.Context, d time.Duration, batch int, prime bool, op func() (int64, error)) (report.Sample, error) {
	batch = max(batch, 1)
	if prime {
		if _, err := op(); err != nil {
			return report.Sample{}, err
		}
	}
	runtime.GC()
	m, err := startMeter()
	if err != nil {
		return report.Sample{}, err
	}
	var s report.Sample
	deadline := m.wall0.Add(d)
	for {
		for i := 0; i < batch; i++ {
			n, err := op()
			if err != nil {
				return report.Sample{}, err
			}
			s.Ops++
			s.Bytes += n
		}
		if !time.Now().Before(deadline) {
			break
		}
		if err := ctx.Err(); err != nil {
			return report.Sample{}, fmt.Errorf("measurement interrupted: %w", err)
		}
	}
	s.Wall, s.CPU, s.Reads, err = m.stop()
	if err != nil {
		return report.Sample{}, err
	}
	if s.Bytes <= 0 {
		return report.Sample{}, errNoProgress
	}
	return s, nil
}
