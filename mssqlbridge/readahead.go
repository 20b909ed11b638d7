package mssqlbridge

import "io"

// DefaultReadAheadSize is the size of a connection's read-ahead buffer: the most plaintext
// bytes it holds that the driver has not asked for yet.
const DefaultReadAheadSize = 64 << 10

// readAhead serves small reads (go-mssqldb reads each packet as an 8-byte header and then its
// body) from a buffer that it fills with large reads from src: the plaintext of a tls.Conn
// (through bridge.Reader, which coalesces records) or the socket itself. A read that finds the
// buffer empty makes one src.Read of up to len(buf) bytes, under the read deadline; every other
// read is a copy.
//
// Not safe for concurrent use: the conn serializes reads with its read lock.
type readAhead struct {
	src io.Reader
	dl  *deadline // the read deadline, entered around every src.Read
	buf []byte
	r   int // next unread byte
	w   int // end of buffered bytes
}

func newReadAhead(src io.Reader, dl *deadline, size int) *readAhead {
	return &readAhead{src: src, dl: dl, buf: make([]byte, size)}
}

// Buffered returns the number of bytes a Read can return without touching src.
func (ra *readAhead) Buffered() int { return ra.w - ra.r }

// Read copies buffered bytes into p, filling the buffer first when it is empty. A p at least
// as large as the buffer is read into directly. When src returns data together with an error,
// the data is returned and the error dropped: src reports it again on the next call (io.EOF
// and crypto/tls's errors are sticky; a timeout recurs while the deadline has passed).
func (ra *readAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if ra.r == ra.w {
		if len(p) >= len(ra.buf) {
			return ra.fill(p)
		}
		n, err := ra.fill(ra.buf)
		ra.r, ra.w = 0, n
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, ra.buf[ra.r:ra.w])
	ra.r += n
	return n, nil
}

// fill makes one read from src into b under the read deadline.
func (ra *readAhead) fill(b []byte) (int, error) {
	if err := ra.dl.enter(); err != nil {
		ra.dl.exit()
		return 0, err
	}
	defer ra.dl.exit()
	// A reader may return (0, nil); retry a bounded number of times, as bufio does.
	for range 100 {
		n, err := ra.src.Read(b)
		if n > 0 {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, io.ErrNoProgress
}
