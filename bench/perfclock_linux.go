//go:build linux

package main

import "golang.org/x/sys/unix"

// perfClock returns CLOCK_MONOTONIC in ns, the clock `perf record -k CLOCK_MONOTONIC` stamps its
// samples with; 0 if it cannot be read.
func perfClock() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
