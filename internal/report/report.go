package report

import (
	"math"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// Groups of cells, in the order the table prints them.
const (
	GroupDriver    = "driver"    // go-mssqldb through a TDS server: value cells and workload cells
	GroupTransport = "transport" // a TLS stream alone, no driver
	GroupFloor     = "floor"     // the least a TLS read over loopback can cost
	GroupIdle      = "idle"      // the idle heap figure (not a cell of the rounds)
)

// Arm names. The driver arms are go-mssqldb with its own TLS (native) or through the bridge
// (bridged), each with TLS and in plaintext (encrypt=disable); the transport arms are a plain
// tls.Conn on the socket, the bridge with its coalescing reader, and the bridge with
// CoalesceRecords under a tls.Conn read directly (the path mssqlbridge's driver reads take).
const (
	ArmNativeTLS      = "native TLS"
	ArmBridgedTLS     = "bridged TLS"
	ArmNativePlain    = "native plain"
	ArmBridgedPlain   = "bridged plain"
	ArmTLSConn        = "tls.Conn"
	ArmBridge         = "bridge"
	ArmBridgeCoalesce = "bridge, tls.Conn read"
	ArmFloorAESGCM    = "AES-128-GCM open"
	ArmFloorTCP       = "TCP read"
)

// DriverRatioPairs are the (candidate, baseline) arm pairs compared in every driver cell and in
// the idle heap figure: bridged over native, with TLS and in plaintext. Read-only.
var DriverRatioPairs = [][2]string{{ArmBridgedTLS, ArmNativeTLS}, {ArmBridgedPlain, ArmNativePlain}}

// Report is everything one run measured; it is what WriteJSON writes and WriteTable and WriteSVG
// draw. Date, Budget and Elapsed are preformatted text; the figures are in their cells.
type Report struct {
	Date          string      `json:"date"`      // when the run started, e.g. "2026-11-30 07:00 UTC"
	PID           int         `json:"pid"`       // the measuring process (the servers run in children)
	CPUModel      string      `json:"cpu_model"` // the machine's CPU model name
	NumCPU        int         `json:"num_cpu"`
	GOMAXPROCS    int         `json:"gomaxprocs"`
	GoVersion     string      `json:"go_version"`
	DriverVersion string      `json:"driver_version"`    // go-mssqldb's module version
	Mode          string      `json:"mode"`              // which groups the run measured
	Server        string      `json:"server"`            // what the driver arms talked to
	Control       bool        `json:"control,omitempty"` // a control run: the bridged arms were native connections too
	Rounds        int         `json:"rounds"`
	Budget        string      `json:"duration"`    // the run's time budget
	Elapsed       string      `json:"elapsed"`     // the run's wall time
	ValueBytes    int         `json:"value_bytes"` // bytes of the value one driver value query reads
	Cells         []*Cell     `json:"cells"`
	Targets       []Target    `json:"targets,omitempty"`
	Worse         []WorseCell `json:"worse_cells,omitempty"` // ratios significantly worse than their baseline
	RatiosChecked int         `json:"ratios_checked"`        // ratios looked at for Worse
	Idle          []*Idle     `json:"idle,omitempty"`        // heap per idle pooled connection
	Verdict       *RunVerdict `json:"verdict,omitempty"`     // the run in a few lines
}

// Cell is one cell of the table: a workload measured with every arm. Fields marked "driver",
// "transport" or "workload" are set only in cells of that kind.
type Cell struct {
	Group      string  `json:"group"`
	Name       string  `json:"name"`
	Value      string  `json:"value,omitempty"`         // driver: nvarchar or varbinary
	PacketSize int     `json:"packet_size,omitempty"`   // driver: negotiated TDS packet size
	RecordSize int     `json:"record_size,omitempty"`   // TLS record size; 0: one per packet
	Pattern    string  `json:"read_pattern,omitempty"`  // transport: how the client reads
	Workload   string  `json:"workload,omitempty"`      // driver workload cells: what each query does
	RoundTrip  bool    `json:"round_trip,omitempty"`    // workload: a query moves a packet or two each way
	Unit       string  `json:"unit,omitempty"`          // workload: what one operation is ("query", "row")
	PerOp      int64   `json:"units_per_op,omitempty"`  // workload: units (rows) per operation
	BytesPerOp int64   `json:"bytes_per_op,omitempty"`  // workload: bytes one operation moves (counted once)
	Counted    string  `json:"bytes_counted,omitempty"` // workload: which bytes BytesPerOp counts
	Arms       []*Arm  `json:"arms"`
	Ratios     []Ratio `json:"ratios,omitempty"`
}

// Arm is one arm of a cell: one sample per round, and the summaries over the rounds (set by
// Finish; units in the JSON names: ms per operation, ms per MiB = 2^20 bytes, ms per MB = 10^6
// bytes, MB/s, read system calls per MiB).
type Arm struct {
	Name      string        `json:"arm"`
	Samples   []Sample      `json:"samples"`
	Wall      stats.Summary `json:"wall_ms_per_op"`
	CPU       stats.Summary `json:"cpu_ms_per_op"`
	CPUPerMiB stats.Summary `json:"cpu_ms_per_mib"`
	CPUPerMB  stats.Summary `json:"cpu_ms_per_mb"`
	MBps      stats.Summary `json:"mb_per_s"`
	Reads     stats.Summary `json:"read_syscalls_per_mib"` // N == 0 where the system does not count them
	WallP50   stats.Summary `json:"wall_ms_p50,omitempty"` // latency workloads: per-sample p50 of one operation
	WallP99   stats.Summary `json:"wall_ms_p99,omitempty"` // latency workloads: per-sample p99 of one operation
}

// Ratio is a paired comparison of two arms of a cell on client CPU per byte: the per-round
// ratios candidate/baseline of CPU ms per MiB, summarized.
type Ratio struct {
	Candidate string `json:"candidate"`
	Baseline  string `json:"baseline"`
	stats.Ratio
}

// Arm returns the cell's arm of that name, or nil.
func (c *Cell) Arm(name string) *Arm {
	for _, a := range c.Arms {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// RatioOf returns the ratio candidate/baseline of the cell, or nil.
func (c *Cell) RatioOf(candidate, baseline string) *Ratio {
	for i := range c.Ratios {
		if c.Ratios[i].Candidate == candidate && c.Ratios[i].Baseline == baseline {
			return &c.Ratios[i]
		}
	}
	return nil
}

// Finish computes the arm summaries and the ratios listed in pairs (candidate, baseline names)
// from the samples.
func (c *Cell) Finish(pairs [][2]string) {
	for _, a := range c.Arms {
		a.Finish()
	}
	c.Ratios = c.Ratios[:0]
	for _, p := range pairs {
		cand, base := c.Arm(p[0]), c.Arm(p[1])
		if cand == nil || base == nil || len(cand.Samples) == 0 || len(base.Samples) == 0 {
			continue
		}
		c.Ratios = append(c.Ratios, Ratio{
			Candidate: p[0],
			Baseline:  p[1],
			Ratio:     stats.PairedRatio(perSample(cand.Samples, Sample.CPUMsPerMiB), perSample(base.Samples, Sample.CPUMsPerMiB)),
		})
	}
}

// Finish computes the summaries of the arm's samples.
func (a *Arm) Finish() {
	a.Wall = stats.Summarize(perSample(a.Samples, Sample.WallMsPerOp))
	a.CPU = stats.Summarize(perSample(a.Samples, Sample.CPUMsPerOp))
	a.CPUPerMiB = stats.Summarize(perSample(a.Samples, Sample.CPUMsPerMiB))
	a.CPUPerMB = stats.Summarize(perSample(a.Samples, Sample.CPUMsPerMB))
	a.MBps = stats.Summarize(perSample(a.Samples, Sample.MBPerSec))
	a.Reads = stats.Summarize(known(perSample(a.Samples, Sample.ReadsPerMiB)))
	a.WallP50 = stats.Summarize(known(perSample(a.Samples, Sample.P50Ms)))
	a.WallP99 = stats.Summarize(known(perSample(a.Samples, Sample.P99Ms)))
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
func perSample(ss []Sample, f func(Sample) float64) []float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	return xs
}

// CellsOf returns the report's cells of one group, in order.
func (r *Report) CellsOf(group string) []*Cell {
	var cs []*Cell
	for _, c := range r.Cells {
		if c.Group == group {
			cs = append(cs, c)
		}
	}
	return cs
}

// Idle is the idle heap figure of one driver arm: KiB (2^10 bytes) of Go heap per pooled
// connection left idle after one query of the value size, one figure per round, and their
// summary.
type Idle struct {
	Arm     string        `json:"arm"`
	Conns   int           `json:"conns"`        // pooled connections measured together
	KiB     []float64     `json:"kib_per_conn"` // by round
	Summary stats.Summary `json:"summary"`      // of KiB
}
