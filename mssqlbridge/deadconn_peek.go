//go:build unix && !linux && !freebsd

package mssqlbridge

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lookAtSocket reports whether the peer has closed or reset the connection, without blocking,
// without taking a byte from the socket and whatever its deadlines: io.EOF for a close (FIN),
// the error of a reset, nil otherwise. This platform has no POLLRDHUP, so it peeks at one byte
// (MSG_PEEK on Go's non-blocking socket): a close behind bytes not yet read is not seen, and
// the request is sent and fails as with go-mssqldb's own transport. It goes through
// RawConn.Control, which neither waits for a Read in progress nor looks at deadlines.
func lookAtSocket(rc syscall.RawConn) error {
	var (
		b    [1]byte
		n    int
		perr error
	)
	err := rc.Control(func(fd uintptr) {
		for {
			n, _, perr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
			if perr != unix.EINTR {
				break
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
	}
	return nil
}

// lookSeesHalfClose: lookAtSocket sees a close only when nothing is unread in front of it.
const lookSeesHalfClose = false
