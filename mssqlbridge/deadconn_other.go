//go:build !unix

package mssqlbridge

import "syscall"

// peekSocket cannot look at a socket without blocking on this platform: it reports nothing, and
// only a connection whose reads have failed is found dead (see conn.checkAlive).
func peekSocket(syscall.RawConn, bool) error { return nil }
