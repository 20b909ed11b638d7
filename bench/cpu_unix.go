//go:build unix

package main

import (
	"fmt"
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used so far, all threads
// included (getrusage RUSAGE_SELF). Servers run in a child process, so their CPU is not in it.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("bench: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
