package report

import (
	"fmt"
	"time"
)

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// SizeLabel formats a byte count that is a whole number of KiB as "N KiB", others as "N B".
func SizeLabel(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// ByteLabel formats a byte count as MiB, KiB or bytes, whichever is whole.
func ByteLabel(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return SizeLabel(n)
}
