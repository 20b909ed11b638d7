//go:build windows

package cputime

import (
	"fmt"
	"syscall"
	"time"
)

// Process returns the user plus kernel CPU time this process has used so far, all threads
// included (GetProcessTimes of the current process).
func Process() (time.Duration, error) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, fmt.Errorf("cputime: GetCurrentProcess: %w", err)
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return 0, fmt.Errorf("cputime: GetProcessTimes: %w", err)
	}
	return filetimeDuration(kernel) + filetimeDuration(user), nil
}

// filetimeDuration converts a FILETIME that holds a duration (a count of 100 ns intervals, as
// GetProcessTimes gives kernel and user time) to a time.Duration.
func filetimeDuration(ft syscall.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}
