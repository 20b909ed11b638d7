package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress shows how far the measuring run is on stderr, naming the cell and arm being measured.
// On a terminal it rewrites one line in place (cut to ttyWidth, so that it never wraps and leaves
// a stale row behind); elsewhere (a CI log) it prints a line each time the round or the cell
// changes. It is used from one goroutine.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	total int
	done  int
	phase string // the round of the last step
	cell  string // the cell of the last step
	width int    // length of the line on screen, to blank it out
}

// ttyWidth is the longest progress line written on a terminal: the width of the narrowest
// terminal it is meant for, less one column.
const ttyWidth = 79

// newProgress returns a progress writer to w, which is treated as a terminal if it is a
// character device.
func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// begin starts a run of total steps.
func (p *progress) begin(total int) {
	p.start = time.Now()
	p.total = total
	p.done = 0
	p.phase, p.cell = "", ""
}

// step reports that the next step, in phase (the round), measuring arm of cell, starts now.
func (p *progress) step(phase, cell, arm string) {
	elapsed := time.Since(p.start)
	eta := "?"
	if p.done > 0 {
		eta = fmtClock(time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done)))
	}
	line := fmt.Sprintf("bench: %s, %s, %s (step %d/%d, %s elapsed, %s left)", phase, cell, arm, p.done+1, p.total, fmtClock(elapsed), eta)
	p.done++
	changed := phase != p.phase || cell != p.cell
	p.phase, p.cell = phase, cell
	if p.tty {
		if r := []rune(line); len(r) > ttyWidth {
			line = string(r[:ttyWidth-1]) + "…"
		}
		n := len([]rune(line))
		pad := max(p.width-n, 0)
		fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
		p.width = n
		return
	}
	if changed {
		fmt.Fprintln(p.w, line)
	}
}

// end finishes the run's progress display.
func (p *progress) end() {
	if p.tty && p.width > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.width, "")
		p.width = 0
	}
}

// note prints a line of its own (setup steps), clearing a progress line first.
func (p *progress) note(format string, args ...any) {
	p.end()
	fmt.Fprintf(p.w, "bench: "+format+"\n", args...)
}

// fmtClock formats d as m:ss.
func fmtClock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
