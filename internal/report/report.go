package main

import (
	"math"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// Groups of cells, in the order the table prints them.
const (
	groupDriver    = "driver"
	groupTransport = "transport"
	groupFloor     = "floor"
	groupIdle      = "idle" // the idle heap figure (not a cell of the rounds)
)

// Arm names. The driver arms are go-mssqldb with its own TLS (native) or through the bridge
// (bridged), each with TLS and in plaintext (encrypt=disable); the transport arms are a plain
// tls.Conn on the socket, the bridge with its coalescing reader, and the bridge with
// CoalesceRecords under a tls.Conn read directly (the path mssqlbridge's driver reads take).
const (
	armNativeTLS    = "native TLS"
	armBridgedTLS   = "bridged TLS"
	armNativePlain  = "native plain"
	armBridgedPlain = "bridged plain"
	armTLSConn      = "tls.Conn"
	armBridge       = "bridge"
	armBridgeDirect = "bridge, tls.Conn read"
	armFloorAESGCM  = "AES-128-GCM open"
	armFloorTCP     = "TCP read"
)

// report is everything one run measured; it is what -json writes.
type report struct {
	Date          string        `json:"date"`
	CPUModel      string        `json:"cpu_model"`
	NumCPU        int           `json:"num_cpu"`
	GOMAXPROCS    int           `json:"gomaxprocs"`
	GoVersion     string        `json:"go_version"`
	DriverVersion string        `json:"driver_version"`
	Mode          string        `json:"mode"`
	Server        string        `json:"server"` // what the driver arms talked to
	Rounds        int           `json:"rounds"`
	Budget        string        `json:"duration"`
	Elapsed       string        `json:"elapsed"`
	ValueBytes    int           `json:"value_bytes"`
	Cells         []*cellResult `json:"cells"`
	Targets       []target      `json:"targets,omitempty"`
	Worse         []worseCell   `json:"worse_cells,omitempty"` // ratios significantly worse than their baseline
	RatiosChecked int           `json:"ratios_checked"`        // ratios looked at for Worse
	Idle          []*idleResult `json:"idle,omitempty"`        // heap per idle pooled connection
}

// cellResult is one cell of the table: a workload measured with every arm.
type cellResult struct {
	Group      string        `json:"group"`
	Name       string        `json:"name"`
	Value      string        `json:"value,omitempty"`         // driver: nvarchar or varbinary
	PacketSize int           `json:"packet_size,omitempty"`   // driver: negotiated TDS packet size
	RecordSize int           `json:"record_size,omitempty"`   // TLS record size; 0: one per packet
	Pattern    string        `json:"read_pattern,omitempty"`  // transport: how the client reads
	Workload   string        `json:"workload,omitempty"`      // driver workload cells: what each query does
	RoundTrip  bool          `json:"round_trip,omitempty"`    // workload: a query moves a packet or two each way
	Unit       string        `json:"unit,omitempty"`          // workload: what one operation is ("query", "row")
	PerOp      int64         `json:"units_per_op,omitempty"`  // workload: units (rows) per operation
	BytesPerOp int64         `json:"bytes_per_op,omitempty"`  // workload: bytes one operation moves (counted once)
	Counted    string        `json:"bytes_counted,omitempty"` // workload: which bytes BytesPerOp counts
	Arms       []*armResult  `json:"arms"`
	Ratios     []ratioResult `json:"ratios,omitempty"`
}

// armResult is one arm of a cell: one sample per round, and the summaries over the rounds.
type armResult struct {
	Name      string        `json:"arm"`
	Samples   []sample      `json:"samples"`
	Wall      stats.Summary `json:"wall_ms_per_op"`
	CPU       stats.Summary `json:"cpu_ms_per_op"`
	CPUPerMiB stats.Summary `json:"cpu_ms_per_mib"`
	CPUPerMB  stats.Summary `json:"cpu_ms_per_mb"`
	MBps      stats.Summary `json:"mb_per_s"`
	Reads     stats.Summary `json:"read_syscalls_per_mib"` // N == 0 where the system does not count them
	WallP50   stats.Summary `json:"wall_ms_p50,omitempty"` // latency workloads: per-sample p50 of one operation
	WallP99   stats.Summary `json:"wall_ms_p99,omitempty"` // latency workloads: per-sample p99 of one operation
}

// ratioResult is a paired comparison of two arms of a cell on client CPU per byte.
type ratioResult struct {
	Candidate string `json:"candidate"`
	Baseline  string `json:"baseline"`
	stats.Ratio
}

// arm returns the cell's arm of that name, or nil.
func (c *cellResult) arm(name string) *armResult {
	for _, a := range c.Arms {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// ratioOf returns the ratio candidate/baseline of the cell, or nil.
func (c *cellResult) ratioOf(candidate, baseline string) *ratioResult {
	for i := range c.Ratios {
		if c.Ratios[i].Candidate == candidate && c.Ratios[i].Baseline == baseline {
			return &c.Ratios[i]
		}
	}
	return nil
}

// finish computes the arm summaries and the ratios listed in pairs (candidate, baseline names)
// from the samples.
func (c *cellResult) finish(pairs [][2]string) {
	for _, a := range c.Arms {
		a.finish()
	}
	c.Ratios = c.Ratios[:0]
	for _, p := range pairs {
		cand, base := c.arm(p[0]), c.arm(p[1])
		if cand == nil || base == nil || len(cand.Samples) == 0 || len(base.Samples) == 0 {
			continue
		}
		c.Ratios = append(c.Ratios, ratioResult{
			Candidate: p[0],
			Baseline:  p[1],
			Ratio:     stats.PairedRatio(perSample(cand.Samples, sample.cpuMsPerMiB), perSample(base.Samples, sample.cpuMsPerMiB)),
		})
	}
}

// finish computes the summaries of the arm's samples.
func (a *armResult) finish() {
	a.Wall = stats.Summarize(perSample(a.Samples, sample.wallMsPerOp))
	a.CPU = stats.Summarize(perSample(a.Samples, sample.cpuMsPerOp))
	a.CPUPerMiB = stats.Summarize(perSample(a.Samples, sample.cpuMsPerMiB))
	a.CPUPerMB = stats.Summarize(perSample(a.Samples, sample.cpuMsPerMB))
	a.MBps = stats.Summarize(perSample(a.Samples, sample.mbPerSec))
	a.Reads = stats.Summarize(known(perSample(a.Samples, sample.readsPerMiB)))
	a.WallP50 = stats.Summarize(known(perSample(a.Samples, sample.p50Ms)))
	a.WallP99 = stats.Summarize(known(perSample(a.Samples, sample.p99Ms)))
}

// known returns xs without its NaN values.
func known(xs []float64) []float64 {
	out := xs[:0:0]
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// perSample maps f over the samples.
func perSample(ss []sample, f func(sample) float64) []float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	return xs
}

// cells returns the report's cells of one group, in order.
func (r *report) cellsOf(group string) []*cellResult {
	var cs []*cellResult
	for _, c := range r.Cells {
		if c.Group == group {
			cs = append(cs, c)
		}
	}
	return cs
}
