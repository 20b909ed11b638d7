//go:build !unix && !windows

package bridge

// processCPU reports that this platform has no process CPU clock the
// benchmarks know how to read; they then leave out the cpu-ms/MB metric.
func processCPU() (int64, bool) { return 0, false }
