//go:build windows

package main

import (
	"fmt"
	"syscall"
	"time"
)

// processCPU returns the user plus kernel CPU time this process has used so far, all threads
// included (GetProcessTimes of the current process). Servers run in a child process, so their CPU
// is not in it.
func processCPU() (time.Duration, error) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, fmt.Errorf("bench: GetCurrentProcess: %w", err)
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return 0, fmt.Errorf("bench: GetProcessTimes: %w", err)
	}
	return filetimeDuration(kernel) + filetimeDuration(user), nil
}

// filetimeDuration converts a FILETIME that holds a duration (a count of 100 ns intervals, as
// GetProcessTimes gives kernel and user time) to a time.Duration.
func filetimeDuration(ft syscall.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}
