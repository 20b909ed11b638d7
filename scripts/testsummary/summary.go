package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// summary follows a `go test -json` stream. It keeps each running test's output until the test
// ends, prints it only if the test failed, and counts skips by reason. It is not safe for
// concurrent use: feed it events from one goroutine.
type summary struct {
	out     io.Writer
	pending map[testKey][]string // output of tests that have not ended yet
	skips   map[string]int       // reason -> count
	order   []string             // reasons in the order first seen
	failed  []testKey
	// broken lists the packages whose tests did not build (so never ran), in order, once each.
	broken []string
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, pending: make(map[testKey][]string), skips: make(map[string]int)}
}

// fileLine is the "name_test.go:123: " prefix the testing package puts before a log line.
var fileLine = regexp.MustCompile(`^\S+\.go:\d+: `)

// add takes one event.
func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		s.brokenBuild(e.ImportPath)
		return
	}
	if e.Test == "" {
		s.packageEvent(e)
		return
	}
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.pending[k] = append(s.pending[k], e.Output)
	case "fail":
		s.printTest(s.pending[k])
		delete(s.pending, k)
		s.failed = append(s.failed, k)
	case "skip":
		s.skip(skipReason(s.pending[k]))
		delete(s.pending, k)
	case "pass":
		delete(s.pending, k)
	}
}

// packageEvent handles what a package prints outside any test: the "ok"/"FAIL" line, a leak
// report from TestMain, a panic. At the end of a failed package it also prints the output of
// tests that never reported an end (a crash or a timeout kills the binary in the middle).
func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "output":
		switch strings.TrimSpace(e.Output) {
		case "PASS", "FAIL", "testing: warning: no tests to run":
			return
		}
		fmt.Fprint(s.out, e.Output)
	case "fail":
		if e.FailedBuild != "" {
			s.brokenBuild(e.Package)
		}
		for k, lines := range s.pending {
			if k.pkg == e.Package {
				s.printTest(lines)
				delete(s.pending, k)
				s.failed = append(s.failed, k)
			}
		}
	}
}

// printTest prints a failed test's output without the runner's progress lines.
func (s *summary) printTest(lines []string) {
	for _, l := range lines {
		if !isProgress(l) {
			fmt.Fprint(s.out, l)
		}
	}
}

func isProgress(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// skipReason is the last message a skipped test logged (the argument of t.Skip) without the
// file:line prefix, on one line: the testing package writes a message's later lines (an error
// text with a newline in it) indented and without a prefix, and they are joined with spaces.
func skipReason(lines []string) string {
	var rest []string // the message's later lines, in order
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "" || isProgress(l) || strings.HasPrefix(l, "--- SKIP"):
			continue
		case fileLine.MatchString(l):
			return strings.Join(append([]string{fileLine.ReplaceAllString(l, "")}, rest...), " ")
		}
		rest = append([]string{l}, rest...)
	}
	if len(rest) > 0 {
		return rest[len(rest)-1]
	}
	return "no reason given"
}

func (s *summary) skip(reason string) {
	if s.skips[reason] == 0 {
		s.order = append(s.order, reason)
	}
	s.skips[reason]++
}

// missingPrefix starts the skip reason of a test that skips because this machine lacks
// something it needs (a client, a Docker engine, MSSQL_DSN); the rest of the reason says what and
// how to get it. Every other skip is by design: a helper process, a mode that runs elsewhere, a
// test that needs a switch such as RELIABILITY_SOAK=1.
const missingPrefix = "missing: "

// skipLines counts the skipped tests, the by-design skips apart from what this machine lacks,
// each group's most frequent reason first:
//
//	25 skipped: 17 by design, 8 for what this machine lacks
//	  by design: runs in full mode only (6), helper process for BenchmarkClientCPU (1)
//	  missing (4): MSSQL_DSN not set: set it to a SQL Server's DSN to run the suites against it
//
// A machine that lacks nothing gets "N skipped, all by design: ..." on one line.
func (s *summary) skipLines() []string {
	var design, missing []string
	nDesign, nMissing := 0, 0
	for _, r := range s.order {
		if strings.HasPrefix(r, missingPrefix) {
			missing = append(missing, r)
			nMissing += s.skips[r]
		} else {
			design = append(design, r)
			nDesign += s.skips[r]
		}
	}
	byCount := func(rs []string) {
		sort.SliceStable(rs, func(i, j int) bool { return s.skips[rs[i]] > s.skips[rs[j]] })
	}
	byCount(design)
	byCount(missing)
	parts := make([]string, 0, len(design))
	for _, r := range design {
		parts = append(parts, fmt.Sprintf("%s (%d)", r, s.skips[r]))
	}
	total := nDesign + nMissing
	switch {
	case total == 0:
		return []string{"0 skipped"}
	case nMissing == 0:
		return []string{fmt.Sprintf("%d skipped, all by design: %s; nothing missing on this machine", total, strings.Join(parts, ", "))}
	}
	lines := []string{fmt.Sprintf("%d skipped: %d by design, %d for what this machine lacks", total, nDesign, nMissing)}
	if nDesign > 0 {
		lines = append(lines, "  by design: "+strings.Join(parts, ", "))
	}
	for _, r := range missing {
		lines = append(lines, fmt.Sprintf("  missing (%d): %s", s.skips[r], strings.TrimPrefix(r, missingPrefix)))
	}
	return lines
}

// brokenBuild records a package that did not build. Build events name a test variant as
// "pkg [pkg.test]"; the list keeps the package's path only.
func (s *summary) brokenBuild(pkg string) {
	pkg, _, _ = strings.Cut(pkg, " [")
	for _, p := range s.broken {
		if p == pkg {
			return
		}
	}
	s.broken = append(s.broken, pkg)
}

// failLines names the packages that did not build and the failed tests (none when all passed).
func (s *summary) failLines() []string {
	var lines []string
	if len(s.broken) > 0 {
		lines = append(lines, fmt.Sprintf("%d did not build: %s", len(s.broken), strings.Join(s.broken, ", ")))
	}
	if len(s.failed) > 0 {
		names := make([]string, len(s.failed))
		for i, k := range s.failed {
			names[i] = k.test + " (" + k.pkg + ")"
		}
		lines = append(lines, fmt.Sprintf("%d failed: %s", len(names), strings.Join(names, ", ")))
	}
	return lines
}
