package main

import (
	"fmt"
	"io"
	"sort"
)

// childServer is what a child mode runs: started servers that print their addresses (info)
// and stop on Close.
type childServer interface {
	info() map[string]string
	Close() error
}

// childModes maps each child mode to the function that starts its servers from its arguments.
var childModes = map[string]func(args []string, stderr io.Writer) (childServer, error){
	childStreams: startStreamServer,
	childTDS:     startTDSServers,
	childFaults:  startFaultServers,
	childSample:  startSampleChild,
}

// runChild is the child process: it starts the servers of mode (args[0]), prints their info as
// "key value" lines and the ready line on stdout, serves until stdin reaches EOF (the parent
// closed it or died), then closes the servers. It returns the exit code.
func runChild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "bench: child: missing mode")
		return 2
	}
	start, ok := childModes[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bench: child: unknown mode %q\n", args[0])
		return 2
	}
	srv, err := start(args[1:], stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: child %s: %v\n", args[0], err)
		return 1
	}
	info := srv.info()
	keys := make([]string, 0, len(info))
	for k := range info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s %s\n", k, info[k])
	}
	fmt.Fprintln(stdout, childReadyLine)
	_, _ = io.Copy(io.Discard, stdin)
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "bench: child %s: close: %v\n", args[0], err)
		return 1
	}
	return 0
}
