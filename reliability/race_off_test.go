//go:build !race

package reliability

// raceEnabled reports whether the test binary runs under the race detector (about 10x slower
// here), to scale time windows that must land inside an operation.
const raceEnabled = false
