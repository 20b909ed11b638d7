package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// childFlag, as the first argument, runs this executable as a server child (hidden mode).
const childFlag = "-child"

// childReadyLine ends what a child prints on stdout: "key value" lines, then this line.
const childReadyLine = "ready"

// childStartTimeout bounds how long a child may take to print its addresses.
const childStartTimeout = 30 * time.Second

// child is a server process started from this executable in child mode. Its servers run until
// its stdin is closed, so a child never outlives the parent: when the parent dies, the pipe closes.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	info  map[string]string
}

// startChild re-executes this program (os.Executable) as "-child mode args...", with stderr
// shared, and reads the "key value" lines it prints up to "ready".
func startChild(mode string, args ...string) (*child, error) {
	return startChildWithin(childStartTimeout, mode, args...)
}

// startChildWithin is startChild for a child that may take up to timeout to be ready.
func startChildWithin(timeout time.Duration, mode string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench: find own executable: %w", err)
	}
	cmd := exec.Command(exe, append([]string{childFlag, mode}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: child %s: %w", mode, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: child %s: %w", mode, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start child %s: %w", mode, err)
	}
	c := &child{cmd: cmd, stdin: stdin, info: map[string]string{}}
	if f, ok := stdout.(*os.File); ok {
		// Pipes support deadlines: a child that hangs before "ready" does not hang the bench.
		_ = f.SetReadDeadline(time.Now().Add(timeout))
	}
	if err := c.readInfo(stdout); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("bench: child %s: %w", mode, err)
	}
	return c, nil
}

// readInfo reads "key value" lines from r up to the ready line.
func (c *child) readInfo(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == childReadyLine {
			return nil
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return fmt.Errorf("unexpected line %q", line)
		}
		c.info[k] = v
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read its stdout: %w", err)
	}
	return errors.New("exited before it was ready")
}

// get returns the value the child printed for key.
func (c *child) get(key string) (string, error) {
	v, ok := c.info[key]
	if !ok {
		return "", fmt.Errorf("bench: child did not print %q", key)
	}
	return v, nil
}

// close asks the child to stop (closes its stdin), waits up to 5 s, then kills it. It returns
// an error if the child had to be killed or exited with a failure.
func (c *child) close() error {
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench: child %s: %w", c.cmd.Args[2], err)
		}
		return nil
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		return fmt.Errorf("bench: child %s did not stop within 5 s; killed", c.cmd.Args[2])
	}
}
