package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sample is one sample of `perf script -F pid,time,period,ip,sym --ns`: the process, the time on
// the recording clock and the period in ns (with -e cpu-clock the period is time), and the
// functions of its call chain, innermost first (one when recorded without -g).
type sample struct {
	pid    int
	time   int64
	period int64
	frames []string
}

// readSamples calls fn for every sample of a perf script stream. A header line (pid, time,
// period, then the innermost frame when there is no call chain) starts a sample; the lines
// after it that begin with a tab are its call chain ("address symbol"). It fails on the first
// header it cannot read, naming the line.
func readSamples(r io.Reader, fn func(sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var cur *sample
	flush := func() {
		if cur != nil {
			fn(*cur)
			cur = nil
		}
	}
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			flush()
			continue
		}
		if text[0] == '\t' {
			if cur != nil {
				cur.frames = append(cur.frames, frameName(text))
			}
			continue
		}
		flush()
		s, err := parseHeader(text)
		if err != nil {
			return fmt.Errorf("perfsplit: perf script line %d: %w", line, err)
		}
		cur = &s
	}
	flush()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("perfsplit: reading perf script output: %w", err)
	}
	return nil
}

// parseHeader reads "PID SECONDS.NANOSECONDS: PERIOD [ADDRESS SYMBOL]".
func parseHeader(text string) (sample, error) {
	f := strings.Fields(text)
	if len(f) < 3 || !strings.HasSuffix(f[1], ":") {
		return sample{}, fmt.Errorf("want \"pid time: period\" (perf script -F pid,time,period,ip,sym --ns), got %q", text)
	}
	pid, err := strconv.Atoi(strings.SplitN(f[0], "/", 2)[0])
	if err != nil {
		return sample{}, fmt.Errorf("pid %q: %w", f[0], err)
	}
	t, err := parseTime(strings.TrimSuffix(f[1], ":"))
	if err != nil {
		return sample{}, err
	}
	period, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return sample{}, fmt.Errorf("period %q: %w", f[2], err)
	}
	s := sample{pid: pid, time: t, period: period}
	if len(f) > 4 {
		s.frames = append(s.frames, frameName(strings.Join(f[3:], " ")))
	}
	return s, nil
}

// parseTime reads "SECONDS.NANOSECONDS" (perf script --ns) as nanoseconds.
func parseTime(s string) (int64, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 9 {
		return 0, fmt.Errorf("time %q: want seconds with 9 decimals (perf script --ns)", s)
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("time %q: not a number", s)
	}
	return a*1e9 + b, nil
}

// frameName returns the symbol of a call chain line "ADDRESS SYMBOL[+OFFSET] [(DSO)]".
func frameName(text string) string {
	f := strings.Fields(text)
	if len(f) < 2 {
		return "[unknown]"
	}
	name := f[1]
	if i := strings.LastIndex(name, "+0x"); i > 0 {
		name = name[:i]
	}
	return name
}
