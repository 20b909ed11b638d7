//go:build windows

package mssqlbridge

import (
	"fmt"
	"syscall"
	"time"
)

// cpuTime returns this process's user plus system CPU time (GetProcessTimes of the current
// process).
func cpuTime() (time.Duration, error) {
	self, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, fmt.Errorf("GetCurrentProcess: %w", err)
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(self, &creation, &exit, &kernel, &user); err != nil {
		return 0, fmt.Errorf("GetProcessTimes: %w", err)
	}
	// A Filetime here is a duration in 100 ns units, not a point in time.
	ticks := func(ft syscall.Filetime) int64 { return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100), nil
}
