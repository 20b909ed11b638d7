package main

import (
	"math"
	"sort"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// armKey names one arm of one cell.
type armKey struct{ cell, arm string }

// interval is the time one measured sample ran (report.Sample's Start and End).
type interval struct {
	start, end int64
	key        armKey
}

// profile is what the perf samples of one arm add up to: time in ns, in all, by the innermost
// function (self) and by every function on the call chain, counted once per sample
// (inclusive).
type profile struct {
	ops       int64
	total     int64
	self, inc map[string]int64
}

// splitter assigns perf samples of the measuring process to the arm whose bench sample was
// running at the time.
type splitter struct {
	pid       int
	intervals []interval // sorted by start; bench samples never overlap
	arms      map[armKey]*profile
	outside   int64 // ns of the process's samples between bench samples (warm-up, set-up)
}

// newSplitter collects the intervals of every sample of rep. It returns nil if no sample has
// a clock time (a run on another system than Linux, or a report from before they were kept).
func newSplitter(rep *report.Report) *splitter {
	sp := &splitter{pid: rep.PID, arms: map[armKey]*profile{}}
	for _, c := range rep.Cells {
		for _, a := range c.Arms {
			k := armKey{c.Group + " " + c.Name, a.Name}
			p := &profile{self: map[string]int64{}, inc: map[string]int64{}}
			sp.arms[k] = p
			for _, s := range a.Samples {
				p.ops += s.Ops
				if s.Start != 0 && s.End > s.Start {
					sp.intervals = append(sp.intervals, interval{s.Start, s.End, k})
				}
			}
		}
	}
	if len(sp.intervals) == 0 {
		return nil
	}
	sort.Slice(sp.intervals, func(i, j int) bool { return sp.intervals[i].start < sp.intervals[j].start })
	return sp
}

// add counts one perf sample: samples of other processes and samples outside every interval
// are left out (the latter counted in outside).
func (sp *splitter) add(s sample) {
	if s.pid != sp.pid {
		return
	}
	i := sort.Search(len(sp.intervals), func(i int) bool { return sp.intervals[i].start > s.time }) - 1
	if i < 0 || s.time > sp.intervals[i].end {
		sp.outside += s.period
		return
	}
	p := sp.arms[sp.intervals[i].key]
	p.total += s.period
	if len(s.frames) == 0 {
		return
	}
	p.self[s.frames[0]] += s.period
	seen := make(map[string]bool, len(s.frames))
	for _, f := range s.frames {
		if !seen[f] {
			seen[f] = true
			p.inc[f] += s.period
		}
	}
}

// perOp returns ns in microseconds per operation of p.
func (p *profile) perOp(ns int64) float64 {
	if p.ops == 0 {
		return 0
	}
	return float64(ns) / 1e3 / float64(p.ops)
}

// diff is one function's cost per operation in two arms.
type diff struct {
	name                string
	candidate, baseline float64 // us per operation
}

// diffs returns, for every function in either profile, its cost per operation in cand and in
// base from the chosen map (self or inclusive), the largest differences either way first,
// at most n.
func diffs(cand, base *profile, inclusive bool, n int) []diff {
	pick := func(p *profile) map[string]int64 {
		if inclusive {
			return p.inc
		}
		return p.self
	}
	cm, bm := pick(cand), pick(base)
	var out []diff
	for name := range cm {
		out = append(out, diff{name, cand.perOp(cm[name]), base.perOp(bm[name])})
	}
	for name := range bm {
		if _, ok := cm[name]; !ok {
			out = append(out, diff{name, 0, base.perOp(bm[name])})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := math.Abs(out[i].candidate-out[i].baseline), math.Abs(out[j].candidate-out[j].baseline)
		if a != b {
			return a > b
		}
		return out[i].name < out[j].name
	})
	return out[:min(n, len(out))]
}
