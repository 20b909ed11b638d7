//go:build !unix && !windows

package cputime

import (
	"errors"
	"fmt"
	"time"
)

// Process reports errors.ErrUnsupported: this platform has no process CPU clock the package
// knows how to read.
func Process() (time.Duration, error) {
	return 0, fmt.Errorf("cputime: no process CPU clock on this platform: %w", errors.ErrUnsupported)
}
