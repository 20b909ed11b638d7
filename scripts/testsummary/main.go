// Command testsummary runs `go test -json` with the arguments it is given, prints the result as
// readably as plain `go test` does (a line per package, the whole output of every failed test,
// build errors, and whatever a package prints outside its tests, such as a leak report), and
// ends with one line counting the skipped tests by reason:
//
//	3 skipped: set RELIABILITY_SOAK=1 for the soak run (1), tsql not installed ... (2)
//
// followed, when tests failed, by a line naming them. It exits with go test's exit status, or 1
// if go test exited 0 although a test failed.
//
//	go run ./scripts/testsummary -race -count=1 ./...
//
// The go command is taken from the GO environment variable when it is set (as the Makefile
// does), else from PATH.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
