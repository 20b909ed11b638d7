package report

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/internal/stats"
)

// A Target is a goal on a per-round ratio (client CPU per byte, or read system calls per MiB, of a
// candidate arm over a baseline) with the verdict of the run's rounds on it. Targets are reported, never enforced. Bench's checkTargets sets them and states
// the rule that gives the verdict; this package only carries and prints them.
type Target struct {
	Name     string     `json:"name"` // what the target is, e.g. "TLS, varbinary/4096: bridged/native CPU per MiB"
	Kind     TargetKind `json:"kind"`
	Limit    float64    `json:"limit"`         // the ratio the median must meet
	Bound    float64    `json:"bound"`         // a round counts as better when its ratio beats this
	Higher   bool       `json:"higher_better"` // the ratio must be at least Limit (MB/s); else at most
	Measured Verdict    `json:"measured"`
}

// TargetKind says what kind of support a target asks of the rounds.
type TargetKind uint8

const (
	TargetGain        TargetKind = iota // a gain: most rounds better, or a significant sign test
	TargetNotWorse                      // no loss: the rounds do not show the candidate worse
	TargetNotWorseRun                   // no loss for the run as a whole: not worse with Holm's adjustment
)

// String names the kind as the table prints it.
func (k TargetKind) String() string {
	switch k {
	case TargetGain:
		return "gain"
	case TargetNotWorse:
		return "not worse"
	case TargetNotWorseRun:
		return "not worse, Holm"
	default:
		return fmt.Sprintf("TargetKind(%d)", uint8(k))
	}
}

// MarshalText makes the JSON output carry the kind's name.
func (k TargetKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name back.
func (k *TargetKind) UnmarshalText(b []byte) error {
	for _, c := range []TargetKind{TargetGain, TargetNotWorse, TargetNotWorseRun} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("report: unknown target kind %q", b)
}

// Verdict is what the rounds say about one target.
type Verdict struct {
	stats.Summary         // of the per-round ratios
	Better        int     `json:"better"`      // rounds whose ratio beat the bound
	Worse         int     `json:"worse"`       // rounds whose ratio was on the wrong side of the bound
	P             float64 `json:"sign_test_p"` // two-sided sign test of Better against Worse
	// HolmP is P adjusted by Holm's method over every ratio of the run; set for TargetNotWorseRun.
	HolmP float64 `json:"holm_p,omitempty"`
	Met   bool    `json:"met"`
	Why   string  `json:"why,omitempty"` // which condition failed, when not met
}

// WorseCell is a ratio of the table that shows the candidate significantly worse than its
// baseline.
type WorseCell struct {
	Cell  string `json:"cell"` // the cell's group and name, e.g. "driver varbinary/4096"
	Ratio Ratio  `json:"ratio"`
	// HolmP is the ratio's sign-test p-value adjusted by Holm's method over every ratio the run
	// checked: below 0.05, the loss stands for the run as a whole, not only for the cell.
	HolmP float64 `json:"holm_p"`
}
