//go:build unix

package mssqlbridge

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// peekSocket looks at the socket once without blocking and without taking any byte from it
// (MSG_PEEK): it returns io.EOF when the peer has closed the connection, the error of a reset,
// an error wrapping errUnsolicited when plain is set and bytes are waiting, and nil otherwise.
// It must not be called while a Read is at the socket: it would wait for that Read (the runtime
// serializes the two).
func peekSocket(rc syscall.RawConn, plain bool) error {
	var (
		b    [1]byte
		n    int
		perr error
	)
	err := rc.Read(func(fd uintptr) bool {
		for {
			n, _, perr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if perr != unix.EINTR {
				return true // never wait for the socket to become readable
			}
		}
	})
	switch {
	case err != nil:
		return nil // the socket is closed or cannot be looked at: the Write will tell
	case perr == unix.EAGAIN || perr == unix.EWOULDBLOCK:
		return nil
	case perr != nil:
		return os.NewSyscallError("recvfrom", perr)
	case n == 0:
		return io.EOF
	case plain:
		return fmt.Errorf("%w (first byte 0x%02x)", errUnsolicited, b[0])
	}
	return nil
}
