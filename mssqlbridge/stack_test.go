package mssqlbridge

import (
	"runtime"
	"sync"
	"testing"
)

// reserveStack really takes stackReserve bytes of stack: goroutines that
// call it and then wait hold stacks of at least twice stackReserve, more
// than goroutines that only wait when those start smaller. If the compiler
// dropped the reserve, both groups would hold the starting size.
func TestReserveStackGrowsStack(t *testing.T) {
	const n = 200
	release := make(chan struct{})
	var done sync.WaitGroup
	defer func() {
		close(release)
		done.Wait()
	}()
	// start starts n goroutines that wait for release and returns the
	// stack the runtime holds for them (both groups stay alive, so the
	// second does not reuse the first's stacks).
	start := func(reserve bool) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var started sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for range n {
			go func() {
				defer done.Done()
				if reserve {
					reserveStack()
				}
				started.Done()
				<-release
			}()
		}
		started.Wait()
		runtime.ReadMemStats(&after)
		return after.StackInuse - before.StackInuse
	}
	plain := start(false)
	reserved := start(true)
	t.Logf("stack in use for %d waiting goroutines: %d B without the reserve, %d B with it", n, plain, reserved)
	// A stack that holds the reserve above the runtime's guard is at least
	// twice stackReserve (stacks are powers of two). Under the race
	// detector goroutines may start that large, so only without it must
	// the reserve show as growth.
	if reserved < n*2*stackReserve {
		t.Fatalf("stack in use: %d B for %d goroutines with the reserve, want at least %d B", reserved, n, n*2*stackReserve)
	}
	if plain < n*2*stackReserve && reserved <= plain {
		t.Fatalf("stack in use: %d B for %d goroutines with the reserve, %d B without; want more with it", reserved, n, plain)
	}
}
