//go:build linux || freebsd

package mssqlbridge

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lookAtSocket reports whether the peer has closed or reset the connection, without blocking,
// without taking a byte from the socket and whatever its deadlines: io.EOF for a close (FIN,
// seen as a half-close by POLLRDHUP even behind bytes not yet read), the error of a reset, nil
// otherwise. It goes through RawConn.Control, which neither waits for a Read in progress nor
// looks at deadlines.
func lookAtSocket(rc syscall.RawConn) error {
	var (
		revents int16
		soerr   int
		perr    error
	)
	err := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		for {
			_, perr = unix.Poll(fds, 0)
			if perr != unix.EINTR {
				break
			}
		}
		revents = fds[0].Revents
		if perr == nil && revents&unix.POLLERR != 0 {
			soerr, perr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		}
	})
	switch {
	case err != nil || perr != nil:
		return nil // the socket is closed or cannot be looked at: the Write will tell
	case soerr != 0:
		return os.NewSyscallError("poll", syscall.Errno(soerr))
	case revents&(unix.POLLRDHUP|unix.POLLHUP) != 0:
		return io.EOF
	}
	return nil
}

// lookSeesHalfClose: lookAtSocket sees a close behind bytes not yet read.
const lookSeesHalfClose = true
