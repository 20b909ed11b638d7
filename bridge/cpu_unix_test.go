//go:build unix

package bridge

import "syscall"

// processCPU returns the user+system CPU time of the process in
// nanoseconds (getrusage(RUSAGE_SELF)), and whether it could be read.
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
