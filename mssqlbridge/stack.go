package mssqlbridge

// Stack reserve for full-encryption Reads.
//
// go-mssqldb reads every response in a new goroutine, whose stack starts
// small (the runtime's starting size, 2 KiB unless the process's goroutines
// use more on average) and is grown, by copying, when a call needs more.
// With go-mssqldb's own TLS the deepest call of that goroutine, crypto/tls
// decrypting a record under the driver's packet read, fits in the stack the
// goroutine has after its first growth. Through the bridge the same call
// sits three frames deeper (go-mssqldb's timeout wrapper, conn.Read, then
// crypto/tls, or the bridge's read-ahead when the read waits on the socket),
// which is just past that size: the runtime then grew the stack on every
// query, in the middle of crypto/tls, costing more than the bridge saves on
// a small round trip. No reasonable frame trimming gets under the limit, so
// conn.Read makes the growth happen on purpose, at its own entry, where the
// stack is shallow and the copy is cheap: reserveStack needs stackReserve
// bytes, more than any common path below conn.Read uses (decrypting an
// AES-GCM record takes about 1.7 KiB of frames; waiting on the socket
// through the bridge less), so on a goroutine whose stack is too small it
// grows once there, and never deeper. On a goroutine whose stack is large
// enough it costs a call and clearing the reserve.

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
