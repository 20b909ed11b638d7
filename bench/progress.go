package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress shows how far the measuring run is on stderr. On a terminal it rewrites one line in
// place; elsewhere (a CI log) it prints a line only when the phase (the round) changes. It is
// used from one goroutine.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	total int
	done  int
	phase string
	width int // length of the line on screen, to blank it out
}

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
	p.phase = ""
}

// step reports that the next step, in phase, doing what, starts now.
func (p *progress) step(phase, what string) {
	elapsed := time.Since(p.start)
	eta := "?"
	if p.done > 0 {
		eta = fmtClock(time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done)))
	}
	line := fmt.Sprintf("bench: %s, step %d/%d, %s elapsed, %s left: %s", phase, p.done+1, p.total, fmtClock(elapsed), eta, what)
	p.done++
	if p.tty {
		pad := max(p.width-len(line), 0)
		fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
		p.width = len(line)
		return
	}
	if phase != p.phase {
		fmt.Fprintln(p.w, line)
	}
	p.phase = phase
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
