//go:build windows

package bridge

import "syscall"

// processCPU returns the user+system CPU time of the process in
// nanoseconds (GetProcessTimes on the current process), and whether it
// could be read.
func processCPU() (int64, bool) {
	self, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, false
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(self, &creation, &exit, &kernel, &user); err != nil {
		return 0, false
	}
	// Filetime counts 100 ns intervals; Nanoseconds would subtract the
	// Windows epoch, which only applies to points in time.
	ticks := func(ft syscall.Filetime) int64 { return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime) }
	return (ticks(kernel) + ticks(user)) * 100, true
}
