package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the bench's child mode when the test binary is re-executed as a server child
// (the smoke test starts children with os.Executable, which is this binary), and the tests
// under goleak otherwise.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}
