package report

import (
	"fmt"
	"strings"
)

// verdictWidth is where writeRunVerdict wraps its lists of ratios.
const verdictWidth = 100

// writeRunVerdict prints the verdict: the machine, what the bridge saves (one line each, with its
// ratio, rounds and sign-test p), what it does not save and what it makes worse (lists by
// measure and arms), the ratios shown but not judged, ratios with too few rounds, and where the
// detail is.
func writeRunVerdict(p printer, r *Report) {
	v := r.Verdict
	p("\n== Verdict on this machine: %s, %d CPUs; %d rounds, %s ==\n", r.CPUModel, r.NumCPU, r.Rounds, r.Date)
	if r.Control {
		p("CONTROL RUN: both arms of every ratio are go-mssqldb's own transport; nothing here is about the bridge\n")
	}
	p("ratio = bridged/native (or as named), median of per-round ratios; n/N = rounds in which the bridge was cheaper\n")
	if len(v.Saves)+len(v.Same)+len(v.Worse)+len(v.WorseAlone) == 0 {
		p("no ratio has the rounds to judge it: nothing said about savings or losses\n")
	} else {
		writeJudged(p, v)
	}
	if len(v.Informational) > 0 {
		p("shown, not judged (%s):\n", v.InformationalWhy)
		writeFindingLists(p, v.Informational, false)
	}
	if len(v.FewRounds) > 0 {
		p("too few rounds to judge (fewer than %d; `make bench` runs 20):\n", v.MinRounds)
		writeFindingLists(p, v.FewRounds, false)
	}
	p("detail: the Targets section and the tables above; how to read them: bench/README.md\n")
}

// writeJudged prints the verdict's judged ratios: saves, does not save, makes worse.
func writeJudged(p printer, v *RunVerdict) {
	if len(v.Saves) == 0 {
		p("the bridge saves: nothing the rounds show\n")
	} else {
		p("the bridge saves:\n")
		for _, f := range v.Saves {
			p("  %s, %s, %s\t%.2f\t%d/%d rounds\t%s\n", f.Cell, f.Arms, f.Measure, f.Ratio.Median, f.Ratio.Lower, f.Ratio.N, pIs("p", f.Ratio.P))
		}
	}
	if len(v.Same) == 0 {
		p("it does not save: -\n")
	} else {
		p("it does not save (no difference the rounds show):\n")
		writeFindingLists(p, v.Same, false)
	}
	if len(v.Worse) == 0 {
		p("it makes worse (Holm-adjusted p < 0.05 over the %d ratios): nothing\n", v.Checked)
	} else {
		p("it makes worse (Holm-adjusted p < 0.05 over the %d ratios):\n", v.Checked)
		for _, f := range v.Worse {
			p("  %s, %s, %s\t%.2f\t%d/%d rounds cheaper\t%s\n", f.Cell, f.Arms, f.Measure, f.Ratio.Median, f.Ratio.Lower, f.Ratio.N, pIs("Holm-adjusted p", f.HolmP))
		}
	}
	if len(v.WorseAlone) > 0 {
		p("not worse for the run as a whole, though dearer with p < 0.05 on its own (chance does that about once in 40):\n")
		writeFindingLists(p, v.WorseAlone, true)
	}
}

// writeFindingLists prints findings as wrapped lists, one per measure and arms, in order of
// first appearance: "    client CPU, TLS: nvarchar/4096 0.99 (20/40), ...". With holm each item
// also carries its Holm-adjusted p-value.
func writeFindingLists(p printer, fs []Finding, holm bool) {
	var keys []string
	items := map[string][]string{}
	for _, f := range fs {
		k := f.Measure + ", " + f.Arms
		if items[k] == nil {
			keys = append(keys, k)
		}
		item := fmt.Sprintf("%s %.2f (%d/%d)", f.Cell, f.Ratio.Median, f.Ratio.Lower, f.Ratio.N)
		if holm {
			item = fmt.Sprintf("%s %.2f (%d/%d, %s, Holm %s)", f.Cell, f.Ratio.Median, f.Ratio.Lower, f.Ratio.N, pIs("p", f.Ratio.P), FormatP(f.HolmP))
		}
		items[k] = append(items[k], item)
	}
	for _, k := range keys {
		for _, l := range wrapList("  "+k+": ", "      ", items[k], verdictWidth) {
			p("%s\n", l)
		}
	}
}

// wrapList joins items with ", " into lines of at most width bytes where it can (an item longer
// than a line gets one of its own), the first line starting with first, the others with indent.
func wrapList(first, indent string, items []string, width int) []string {
	var lines []string
	var b strings.Builder
	b.WriteString(first)
	start := len(first)
	for i, it := range items {
		sep := ""
		if i < len(items)-1 {
			sep = ","
		}
		if b.Len() > start && b.Len()+1+len(it)+len(sep) > width {
			lines = append(lines, b.String())
			b.Reset()
			b.WriteString(indent)
			start = len(indent)
		} else if b.Len() > start {
			b.WriteString(" ")
		}
		b.WriteString(it + sep)
	}
	return append(lines, b.String())
}

// pIs formats "name=p", or "name<0.001".
func pIs(name string, p float64) string {
	if f := FormatP(p); strings.HasPrefix(f, "<") {
		return name + f
	}
	return name + "=" + FormatP(p)
}
