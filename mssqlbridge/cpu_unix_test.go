//go:build unix

package mssqlbridge

import (
	"fmt"
	"syscall"
	"time"
)

// cpuTime returns this process's user plus system CPU time (getrusage(RUSAGE_SELF)).
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
