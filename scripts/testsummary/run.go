package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// run runs `go test -json args...`, reports through a summary on stdout (go test's own stderr
// goes to stderr), and returns the exit status: go test's, or 1 when a test or a build failed
// while go test exited 0, or 2 when go test could not be run.
func run(args []string, stdout, stderr io.Writer) int {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testsummary: start %s test: %v\n", goCmd, err)
		return 2
	}
	s := newSummary(stdout)
	readErr := feed(s, pipe)
	waitErr := cmd.Wait()

	for _, l := range s.skipLines() {
		fmt.Fprintln(stdout, l)
	}
	for _, l := range s.failLines() {
		fmt.Fprintln(stdout, l)
	}
	if readErr != nil {
		fmt.Fprintf(stderr, "testsummary: read go test output: %v\n", readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		if code := exit.ExitCode(); code > 0 {
			return code
		}
		return 1 // killed by a signal
	case waitErr != nil:
		fmt.Fprintf(stderr, "testsummary: %s test: %v\n", goCmd, waitErr)
		return 2
	case readErr != nil || len(s.failed) > 0 || len(s.broken) > 0:
		return 1
	}
	return 0
}

// feed passes every event of r to s. A line that is not a JSON event is printed as it is.
func feed(s *summary, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		// Keep draining so that go test is not blocked on a full pipe.
		_, _ = io.Copy(io.Discard, r)
		return err
	}
	return nil
}
