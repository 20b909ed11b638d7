//go:build !linux

package main

// perfClock returns 0: perf, whose clock the samples' Start and End follow, runs on Linux only.
func perfClock() int64 { return 0 }
