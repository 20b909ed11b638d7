package integration

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	usedDocker := stopContainers()
	// The Docker client and testcontainers' reaper keep goroutines of their own that this
	// package does not control; the leak check covers every run that did not start them.
	if code == 0 && !usedDocker {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
