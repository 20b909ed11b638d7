package mssqlbridge

import (
	"testing"
	"unsafe"
)

// useStack needs about stackReserve-512 bytes of stack.
//
//go:noinline
func useStack() {
	var pad [stackReserve - 512]byte
	touchUse(&pad)
}

//go:noinline
func touchUse(pad *[stackReserve - 512]byte) { pad[0] = 1 }

// stackMoves reports, for a new goroutine, whether its stack was moved
// (grown) by reserveStack and by useStack called after it: the address of
// a local variable changes when the runtime copies the stack.
func stackMoves(reserve bool) (byReserve, byUse bool) {
	type result struct{ byReserve, byUse bool }
	ch := make(chan result)
	go func() {
		var x byte
		a0 := uintptr(unsafe.Pointer(&x))
		if reserve {
			reserveStack()
		}
		a1 := uintptr(unsafe.Pointer(&x))
		useStack()
		a2 := uintptr(unsafe.Pointer(&x))
		ch <- result{a0 != a1, a1 != a2}
	}()
	r := <-ch
	return r.byReserve, r.byUse
}

// After reserveStack, a call that needs less than stackReserve does not
// grow the stack: the growth happened in reserveStack, if at all. Without
// the reserve the same call grows a new goroutine's stack when it starts
// at the runtime's smallest size, so the check can fail.
func TestReserveStack(t *testing.T) {
	for range 20 {
		if _, byUse := stackMoves(true); byUse {
			t.Fatal("a call after reserveStack grew the stack: the reserve did not make room")
		}
	}
	byReserve, _ := stackMoves(true)
	_, withoutReserve := stackMoves(false)
	t.Logf("new goroutine: reserveStack moved the stack: %v; without it, the call moved it: %v", byReserve, withoutReserve)
	if withoutReserve && !byReserve {
		t.Fatal("the call needed a larger stack, yet reserveStack did not grow it")
	}
}
