package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/cputime"
)

// meter measures one sample: start it, do the work, stop it. The read system call counter is
// taken outside the CPU window, so reading it costs the sample nothing.
type meter struct {
	wall0  time.Time
	cpu0   time.Duration
	reads0 int64
}

// processCPU returns the CPU time this process has used so far, all threads included; servers
// run in a child process, so their CPU is not in it.
func processCPU() (time.Duration, error) {
	d, err := cputime.Process()
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return d, nil
}

// startMeter takes the starting read count, process CPU and wall clock.
func startMeter() (meter, error) {
	reads := readSyscalls()
	cpu, err := processCPU()
	if err != nil {
		return meter{}, err
	}
	return meter{wall0: time.Now(), cpu0: cpu, reads0: reads}, nil
}

// stop returns the wall time, CPU and read system calls since start (reads -1 if unknown).
func (m meter) stop() (wall, cpu time.Duration, reads int64, err error) {
	wall = time.Since(m.wall0)
	c, err := processCPU()
	if err != nil {
		return 0, 0, 0, err
	}
	reads = -1
	if r := readSyscalls(); r >= 0 && m.reads0 >= 0 {
		reads = r - m.reads0
	}
	return wall, c - m.cpu0, reads, nil
}

// readSyscalls returns the number of read system calls this process has made (the syscr line
// of /proc/self/io, Linux), or -1 if it cannot be read.
func readSyscalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
