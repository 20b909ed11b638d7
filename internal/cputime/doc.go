// Package cputime reads the CPU time the current process has used, the clock that the bench
// program and the CPU benchmarks measure client cost with. Servers that must not be counted run
// in another process.
package cputime
