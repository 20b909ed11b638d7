//go:build !unix

package mssqlbridge

import "syscall"

// lookAtSocket cannot look at a socket without blocking on this platform: it reports nothing,
// and only a connection whose reads have failed is found dead (see conn.checkAlive).
func lookAtSocket(syscall.RawConn) error { return nil }

// lookSeesHalfClose: lookAtSocket sees nothing on this platform.
const lookSeesHalfClose = false
