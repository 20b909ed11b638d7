package main

import (
	"math"
	"time"
)

// sample is one measurement of the client: ops operations (queries, reads) that moved bytes
// payload bytes in wall time, using cpu of this process and making reads read system calls
// (-1 where the system does not count them).
type sample struct {
	Round int           `json:"round"`
	Ops   int64         `json:"ops"`
	Bytes int64         `json:"bytes"`
	Wall  time.Duration `json:"wall_ns"`
	CPU   time.Duration `json:"cpu_ns"`
	Reads int64         `json:"read_syscalls"`
	// WallP50 and WallP99 are percentiles of one operation's wall time within the sample, for
	// latency workloads (0: not recorded).
	WallP50 time.Duration `json:"wall_p50_ns,omitempty"`
	WallP99 time.Duration `json:"wall_p99_ns,omitempty"`
}

// Derived per-sample figures. Units: ms, MiB = 2^20 bytes, MB = 10^6 bytes.
func (s sample) wallMsPerOp() float64 { return ms(s.Wall) / float64(s.Ops) }
func (s sample) cpuMsPerOp() float64  { return ms(s.CPU) / float64(s.Ops) }
func (s sample) cpuMsPerMiB() float64 { return ms(s.CPU) / (float64(s.Bytes) / (1 << 20)) }
func (s sample) cpuMsPerMB() float64  { return ms(s.CPU) / (float64(s.Bytes) / 1e6) }
func (s sample) mbPerSec() float64    { return float64(s.Bytes) / 1e6 / s.Wall.Seconds() }

// readsPerMiB is read system calls per MiB; NaN when the count is unknown (known
// leaves such samples out).
func (s sample) readsPerMiB() float64 {
	if s.Reads < 0 {
		return math.NaN()
	}
	return float64(s.Reads) / (float64(s.Bytes) / (1 << 20))
}

// p50Ms and p99Ms are the per-operation wall-time percentiles in ms; NaN when not recorded.
func (s sample) p50Ms() float64 { return msOrNaN(s.WallP50) }
func (s sample) p99Ms() float64 { return msOrNaN(s.WallP99) }

// msOrNaN is ms(d), or NaN for 0 (not recorded).
func msOrNaN(d time.Duration) float64 {
	if d == 0 {
		return math.NaN()
	}
	return ms(d)
}
