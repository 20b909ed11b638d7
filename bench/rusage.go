package main

import (
	"fmt"
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used so far, all threads
// included (getrusage RUSAGE_SELF). Servers run in a child process, so their CPU is not in it.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("bench: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// sample is one measurement of the client: ops operations (queries, reads) that moved bytes
// payload bytes in wall time, using cpu of this process.
type sample struct {
	Round int           `json:"round"`
	Ops   int64         `json:"ops"`
	Bytes int64         `json:"bytes"`
	Wall  time.Duration `json:"wall_ns"`
	CPU   time.Duration `json:"cpu_ns"`
}

// meter measures one sample: start it, do the work, stop it.
type meter struct {
	wall0 time.Time
	cpu0  time.Duration
}

// startMeter takes the starting wall clock and process CPU.
func startMeter() (meter, error) {
	cpu, err := processCPU()
	if err != nil {
		return meter{}, err
	}
	return meter{wall0: time.Now(), cpu0: cpu}, nil
}

// stop returns the wall time and CPU used since start.
func (m meter) stop() (wall, cpu time.Duration, err error) {
	wall = time.Since(m.wall0)
	c, err := processCPU()
	if err != nil {
		return 0, 0, err
	}
	return wall, c - m.cpu0, nil
}

// Derived per-sample figures. Units: ms, MiB = 2^20 bytes, MB = 10^6 bytes.
func (s sample) wallMsPerOp() float64 { return ms(s.Wall) / float64(s.Ops) }
func (s sample) cpuMsPerOp() float64  { return ms(s.CPU) / float64(s.Ops) }
func (s sample) cpuMsPerMiB() float64 { return ms(s.CPU) / (float64(s.Bytes) / (1 << 20)) }
func (s sample) cpuMsPerMB() float64  { return ms(s.CPU) / (float64(s.Bytes) / 1e6) }
func (s sample) mbPerSec() float64    { return float64(s.Bytes) / 1e6 / s.Wall.Seconds() }
