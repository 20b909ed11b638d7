package report

// RunVerdict is the end of a run in a few lines: on this machine, what the bridge saves, what it
// does not, and what it makes worse, each ratio with its rounds. Bench's conclude sets it from
// the same judgement of each ratio that its Targets read, and states the rule; this package only
// prints it (WriteTable, last).
type RunVerdict struct {
	// MinRounds is the fewest rounds a ratio needs to be judged; ratios with fewer are in
	// FewRounds.
	MinRounds int `json:"min_rounds"`
	// Saves are the ratios whose rounds show the bridge cheaper (client CPU) or making fewer read
	// system calls; Same those that show no difference; Worse those dearer with Holm-adjusted
	// p < 0.05 over every judged ratio of the run (Checked of them).
	Saves     []Finding `json:"saves"`
	Same      []Finding `json:"same"`
	Worse     []Finding `json:"worse"`
	FewRounds []Finding `json:"few_rounds,omitempty"`
	Checked   int       `json:"ratios_checked"`
	// WorseAlone are the ratios dearer with p < 0.05 on their own that Holm's adjustment does not
	// keep: by chance, about one in 40 ratios of identical arms.
	WorseAlone []Finding `json:"worse_alone,omitempty"`
	// Informational are ratios shown and not judged (not in Checked), for the reason
	// InformationalWhy gives.
	Informational    []Finding `json:"informational,omitempty"`
	InformationalWhy string    `json:"informational_why,omitempty"`
}

// Finding is one ratio of the verdict.
type Finding struct {
	Cell    string  `json:"cell"`    // the cell's name, e.g. "varbinary/4096"
	Arms    string  `json:"arms"`    // "TLS", "plain", or candidate/baseline for other pairs
	Measure string  `json:"measure"` // "client CPU" or "read system calls"
	Ratio   Ratio   `json:"ratio"`
	HolmP   float64 `json:"holm_p,omitempty"` // client CPU ratios: adjusted over the run
}
