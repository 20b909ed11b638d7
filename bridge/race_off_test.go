//go:build !race

package bridge

// raceEnabled reports whether the test binary runs under the race detector,
// whose sync.Pool drops some Puts on purpose (so allocation counts differ).
const raceEnabled = false
