// Command testsummary runs `go test -json` with the arguments it is given, prints the result as
// readably as plain `go test` does (a line per package, the whole output of every failed test,
// build errors, and whatever a package prints outside its tests, such as a leak report), and
// ends with the skipped tests counted by reason, the skips by design apart from what this
// machine lacks (reasons that start with "missing: ", the convention the project's tests follow;
// see skipLines):
//
//	3 skipped: 1 by design, 2 for what this machine lacks
//	  by design: set RELIABILITY_SOAK=1 for the soak run (1)
//	  missing (2): tsql not installed (install Debian package freetds-bin) ...
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
