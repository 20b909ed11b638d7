package main

// target is a goal of issue 8 on a ratio of client CPU per MiB, checked against what the run
// measured. It is reported, never enforced: the bench exits 0 whether or not a target is met.
type target struct {
	Cell      string  `json:"cell"`
	Candidate string  `json:"candidate"`
	Baseline  string  `json:"baseline"`
	Limit     float64 `json:"limit"`    // the median ratio must be at most this
	Measured  float64 `json:"measured"` // the median paired ratio
	Met       bool    `json:"met"`
	Ratio     ratio   `json:"ratio"` // the paired ratio in full: spread, rounds lower, sign test
}

// targetCell is the driver cell the issue 8 targets are stated for.
const targetCell = "varbinary/4096"

// checkTargets evaluates the issue 8 targets against the report's driver cells; targets whose
// cell was not measured are left out.
func checkTargets(r *report) []target {
	goals := []target{
		{Cell: targetCell, Candidate: armBridgedPlain, Baseline: armNativePlain, Limit: 0.90},
		{Cell: targetCell, Candidate: armBridgedTLS, Baseline: armNativeTLS, Limit: 0.87},
	}
	var out []target
	for _, g := range goals {
		for _, c := range r.cellsOf(groupDriver) {
			if c.Name != g.Cell {
				continue
			}
			if q := c.ratioOf(g.Candidate, g.Baseline); q != nil && q.N > 0 {
				g.Measured = q.Median
				g.Met = q.Median <= g.Limit
				g.Ratio = q.ratio
				out = append(out, g)
			}
		}
	}
	return out
}
