package mssqlbridge

// Stack reserve for full-encryption Reads.
//
// go-mssqldb reads every response in a new goroutine, whose stack starts
// small (the runtime's starting size: 2 KiB unless the process's goroutines
// use more on average) and is grown, by copying every frame, when a call
// needs more. With go-mssqldb's own TLS that goroutine grows once, when it
// enters its response loop, and its deepest calls (crypto/tls decrypting a
// record, or waiting on the socket) then fit. Through the bridge the same
// calls sit deeper: two frames more above crypto/tls (go-mssqldb's timeout
// wrapper and conn.Read), and for a socket wait the bridge's read-ahead
// below it. That was just past the grown size, so the runtime grew the
// stack a second time on every query, in the middle of crypto/tls, where
// the copy is dearest (measured: runtime.newstack 15-16% of the client's
// CPU on a small round trip, against 4% with go-mssqldb's own TLS; see the
// bench's round-trip cells). Trimming frames does not get under the limit
// (two small frames already cross it), so conn.Read makes the growth happen
// at its own entry, where the stack is shallow: reserveStack needs
// stackReserve bytes, more than the paths below conn.Read use (decrypting
// an AES-GCM record takes about 1.7 KiB of frames), so a goroutine whose
// stack is too small grows once there and not deeper. A goroutine whose
// stack is large enough pays a call and clearing the reserve.

// stackReserve is the stack a full-encryption Read makes sure is free below
// conn.Read before it calls crypto/tls.
const stackReserve = 2048

// reserveStack uses stackReserve bytes of stack, so that the runtime grows
// the goroutine's stack here if it has less free.
//
//go:noinline
func reserveStack() {
	var pad [stackReserve]byte
	touchStack(&pad)
}

// touchStack keeps pad on the stack (it does not escape) and in use.
//
//go:noinline
func touchStack(pad *[stackReserve]byte) { pad[0] = 1 }
