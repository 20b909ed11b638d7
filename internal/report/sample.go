package report

import (
	"math"
	"time"
)

// Sample is one measurement of the client in one round: Ops operations (queries, reads) that
// moved Bytes payload bytes in Wall time, using CPU (user+system) of the measuring process and
// making Reads read system calls (-1 where the system does not count them).
type Sample struct {
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
	// Start and End bound the sample on the clock `perf record -k CLOCK_MONOTONIC` stamps its
	// samples with, in ns (0 where the bench cannot read that clock), so that a perf profile of
	// a run can be split by cell and arm (scripts/perfsplit).
	Start int64 `json:"clock_start_ns,omitempty"`
	End   int64 `json:"clock_end_ns,omitempty"`
}

// Derived per-sample figures. Units: ms, MiB = 2^20 bytes, MB = 10^6 bytes.
func (s Sample) WallMsPerOp() float64 { return ms(s.Wall) / float64(s.Ops) }
func (s Sample) CPUMsPerOp() float64  { return ms(s.CPU) / float64(s.Ops) }
func (s Sample) CPUMsPerMiB() float64 { return ms(s.CPU) / (float64(s.Bytes) / (1 << 20)) }
func (s Sample) CPUMsPerMB() float64  { return ms(s.CPU) / (float64(s.Bytes) / 1e6) }
func (s Sample) MBPerSec() float64    { return float64(s.Bytes) / 1e6 / s.Wall.Seconds() }

// ReadsPerMiB is read system calls per MiB; NaN when the count is unknown (known
// leaves such samples out).
func (s Sample) ReadsPerMiB() float64 {
	if s.Reads < 0 {
		return math.NaN()
	}
	return float64(s.Reads) / (float64(s.Bytes) / (1 << 20))
}

// P50Ms and P99Ms are the per-operation wall-time percentiles in ms; NaN when not recorded.
func (s Sample) P50Ms() float64 { return msOrNaN(s.WallP50) }
func (s Sample) P99Ms() float64 { return msOrNaN(s.WallP99) }

// msOrNaN is ms(d), or NaN for 0 (not recorded).
func msOrNaN(d time.Duration) float64 {
	if d == 0 {
		return math.NaN()
	}
	return ms(d)
}
