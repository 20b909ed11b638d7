package report

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A Target is a decided goal on one per-round ratio of a cell (client CPU per byte, or read
// system calls per MiB, of a candidate arm over a baseline) with what the run's rounds say about
// it. Targets are reported, never enforced. Bench's checkTargets sets them from the same
// judgement of the ratio that places it in the RunVerdict, so the two cannot disagree; this
// package only carries and prints them.
type Target struct {
	Name string     `json:"name"` // what the target is, e.g. "varbinary/4096: bridged TLS/native TLS, CPU per MiB"
	Kind TargetKind `json:"kind"`
	// The ratio the target is on, named as the RunVerdict's Finding names it.
	Cell    string `json:"cell"`
	Arms    string `json:"arms"`
	Measure string `json:"measure"`
	// Limit is the ratio the median must meet (TargetGain only); a round counts as better when
	// its ratio is below Bound.
	Limit    float64 `json:"limit,omitempty"`
	Bound    float64 `json:"bound"`
	Measured Verdict `json:"measured"`
}

// TargetKind says what a target asks of the rounds.
type TargetKind uint8

const (
	// TargetGain: the median at or below Limit, and the rounds show the candidate below Bound
	// (the verdict's "saves").
	TargetGain TargetKind = iota
	// TargetNotWorse: the rounds do not show the candidate dearer for the run as a whole (not in
	// the verdict's "makes worse": Holm-adjusted p < 0.05). It has no limit on the median.
	TargetNotWorse
)

// targetKindNames names every kind, keyed: String and UnmarshalText read it.
var targetKindNames = [...]string{TargetGain: "gain", TargetNotWorse: "not worse"}

// String names the kind as the table prints it.
func (k TargetKind) String() string {
	if int(k) < len(targetKindNames) {
		return targetKindNames[k]
	}
	return fmt.Sprintf("TargetKind(%d)", uint8(k))
}

// MarshalText makes the JSON output carry the kind's name.
func (k TargetKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name back.
func (k *TargetKind) UnmarshalText(b []byte) error {
	return unmarshalName(k, targetKindNames[:], "target kind", b)
}

// Outcome is what a run concludes about a target.
type Outcome uint8

const (
	OutcomeNotJudged Outcome = iota // too few rounds to say either way
	OutcomeMet
	OutcomeNotMet // the run misses the goal
)

// outcomeNames names every outcome, keyed: String and UnmarshalText read it.
var outcomeNames = [...]string{OutcomeNotJudged: "not judged", OutcomeMet: "MET", OutcomeNotMet: "NOT MET"}

// String names the outcome as the table prints it.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// MarshalText makes the JSON output carry the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's name back.
func (o *Outcome) UnmarshalText(b []byte) error {
	return unmarshalName(o, outcomeNames[:], "outcome", b)
}

// unmarshalName sets *v to the value whose name in names (indexed by value) is b.
func unmarshalName[T ~uint8](v *T, names []string, what string, b []byte) error {
	for i, n := range names {
		if string(b) == n {
			*v = T(i)
			return nil
		}
	}
	return fmt.Errorf("report: unknown %s %q", what, b)
}

// Verdict is what the rounds say about one target.
type Verdict struct {
	stats.Summary         // of the per-round ratios
	Better        int     `json:"better"`      // rounds whose ratio was below the bound
	Worse         int     `json:"worse"`       // rounds whose ratio was above it
	P             float64 `json:"sign_test_p"` // two-sided sign test of Better against Worse
	// HolmP is the ratio's P adjusted by Holm's method over every judged ratio of the run; set
	// for TargetNotWorse.
	HolmP   float64 `json:"holm_p,omitempty"`
	Outcome Outcome `json:"outcome"`
	Why     string  `json:"why,omitempty"` // why not met or not judged
}

// WorseCell is a ratio of the table that shows the candidate dearer than its baseline with
// p < 0.05 on its own.
type WorseCell struct {
	Cell  string `json:"cell"` // the cell's group and name, e.g. "driver varbinary/4096"
	Ratio Ratio  `json:"ratio"`
	// HolmP is the ratio's sign-test p-value adjusted by Holm's method over every ratio the run
	// judged.
	HolmP float64 `json:"holm_p"`
	// ForRun says the loss stands for the run (the verdict lists it under "makes worse").
	ForRun bool `json:"for_the_run,omitempty"`
}
