package main

import (
	"context"
	"fmt"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// armRunner measures one arm of a cell: sample runs the arm's workload for about d and returns
// the measurement.
type armRunner struct {
	name   string
	sample func(ctx context.Context, d time.Duration) (report.Sample, error)
}

// cellRunner is one cell to measure: its result (filled in as rounds go), its arms in the
// result's arm order, and the ratios to compute at the end.
type cellRunner struct {
	result *report.Cell
	arms   []armRunner
	pairs  [][2]string // (candidate, baseline) arm names
	rounds int         // the cell takes part in rounds 1..rounds only; 0: in every round
}

// newCell makes a cellRunner whose result has one empty report.Arm per arm.
func newCell(result *report.Cell, arms []armRunner, pairs [][2]string) *cellRunner {
	for _, a := range arms {
		result.Arms = append(result.Arms, &report.Arm{Name: a.name})
	}
	return &cellRunner{result: result, arms: arms, pairs: pairs}
}

// minSlice is the shortest time a sample is given, however far behind the run is.
const minSlice = 20 * time.Millisecond

// warmupSlice is how long each arm runs, unmeasured, before the first round: the first queries
// of a connection and the first reads of a process pay for heap growth and page faults that
// later ones do not.
const warmupSlice = 50 * time.Millisecond

// runRounds measures every arm of every cell once per round (a cell with a rounds limit takes
// part in the first rounds only). Groups (driver, transport, floor)
// run one after the other, each with all its rounds, because a switch from one kind of work to
// another makes the first samples after it dearer (measured: the first driver arm after the
// transport cells paid up to 4x); within a group, every round visits every cell in order and,
// inside a cell, the arms in the order armOrder gives for the round, so that slow drifts of the
// machine, and what one sample leaves for the next, fall on every arm alike, and paired arms run
// side by side. Only arms of one cell are compared, never groups with each other.
//
// Each group gets a share of budget in proportion to its number of samples, and each sample an
// equal share of what is left of its group's (at least minSlice), so that setup costs between
// samples (connecting, collecting garbage, an operation that overruns its slice) shorten the
// group's later samples instead of making the run overrun the budget, and a group that overruns
// all the same (operations longer than their slices) does not squeeze the groups after it. Each
// sample starts with one unmeasured operation and a garbage collection (see measureFor), so that
// no arm pays for the garbage of the one before it. Before the first round of a group, every arm
// of the group runs once for warmupSlice, unmeasured (that time counts against the group's
// budget). It stops at the first error; the cells' summaries are computed from the samples taken,
// whether it stopped early or not.
func runRounds(ctx context.Context, cells []*cellRunner, rounds int, budget time.Duration, prog *progress) error {
	total := 0
	for _, c := range cells {
		total += c.roundsOf(rounds) * len(c.arms)
	}
	if total == 0 {
		return nil
	}
	defer prog.end()
	defer func() {
		for _, c := range cells {
			c.result.Finish(c.pairs)
		}
	}()
	prog.begin(total)
	for _, group := range groupCells(cells) {
		left := 0
		for _, c := range group {
			left += c.roundsOf(rounds) * len(c.arms)
		}
		groupBudget := budget * time.Duration(left) / time.Duration(total)
		start := time.Now()
		prog.note("warming up the %s arms", group[0].result.Group)
		for _, c := range group {
			for _, a := range c.arms {
				if _, err := a.sample(ctx, warmupSlice); err != nil {
					return fmt.Errorf("bench: %s %s, %s, warm-up: %w", c.result.Group, c.result.Name, a.name, err)
				}
			}
		}
		for r := 0; r < rounds; r++ {
			for _, c := range group {
				if r >= c.roundsOf(rounds) {
					continue
				}
				for _, i := range armOrder(len(c.arms), r) {
					a := c.arms[i]
					prog.step(fmt.Sprintf("%s round %d/%d", c.result.Group, r+1, rounds), c.result.Name, a.name)
					slice := max((groupBudget-time.Since(start))/time.Duration(left), minSlice)
					left--
					s, err := c.sample(ctx, a, slice)
					if err != nil {
						return fmt.Errorf("bench: %s %s, %s, round %d: %w", c.result.Group, c.result.Name, a.name, r+1, err)
					}
					s.Round = r + 1
					c.result.Arms[i].Samples = append(c.result.Arms[i].Samples, s)
				}
			}
		}
	}
	return nil
}

// sample measures arm a of the cell for slice, under the profiler labels "cell" and "arm", so
// that a CPU profile of a run (-cpuprofile) can be split by arm (go tool pprof -tagfocus) and
// arms measured side by side compared in one profile. Goroutines the arm starts inherit the
// labels; the scheduler's own work does not carry them. The sample's Start and End, on perf's
// clock, split a perf profile of the whole process, kernel included, the same way.
func (c *cellRunner) sample(ctx context.Context, a armRunner, slice time.Duration) (s report.Sample, err error) {
	start := perfClock()
	pprof.Do(ctx, pprof.Labels("cell", c.result.Group+" "+c.result.Name, "arm", a.name), func(ctx context.Context) {
		s, err = a.sample(ctx, slice)
	})
	if start != 0 {
		s.Start, s.End = start, perfClock()
	}
	return s, err
}

// roundsOf is the number of rounds, of a run of rounds, that the cell takes part in.
func (c *cellRunner) roundsOf(rounds int) int {
	if c.rounds > 0 {
		return min(c.rounds, rounds)
	}
	return rounds
}

// groupCells splits cells into runs of the same group, in order.
func groupCells(cells []*cellRunner) [][]*cellRunner {
	var groups [][]*cellRunner
	for i, c := range cells {
		if i == 0 || c.result.Group != cells[i-1].result.Group {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], c)
	}
	return groups
}

// filterCells keeps the cells whose "group name" matches cellsRe and, in them, the arms whose
// name matches armsRe (a nil pattern matches everything); cells left without arms are dropped.
// Ratios whose arms were filtered out are not computed. It modifies the cells it keeps.
func filterCells(cells []*cellRunner, cellsRe, armsRe *regexp.Regexp) []*cellRunner {
	var out []*cellRunner
	for _, c := range cells {
		if cellsRe != nil && !cellsRe.MatchString(c.result.Group+" "+c.result.Name) {
			continue
		}
		if armsRe != nil {
			var arms []armRunner
			var results []*report.Arm
			for i, a := range c.arms {
				if armsRe.MatchString(a.name) {
					arms = append(arms, a)
					results = append(results, c.result.Arms[i])
				}
			}
			c.arms, c.result.Arms = arms, results
		}
		if len(c.arms) > 0 {
			out = append(out, c)
		}
	}
	return out
}
