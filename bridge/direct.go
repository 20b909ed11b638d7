package bridge

// Direct reads. After CoalesceRecords, a passthrough Read that finds
// nothing buffered may read the socket straight into the caller's buffer
// (the tls.Conn's own input buffer) instead of into the read-ahead buffer:
// the bytes are then copied once less, and the Read touches no pooled
// buffer. It hands over what it read under the same rules as a Read from
// the read-ahead buffer (see readPassthrough): the current record, then the
// application-data records longer than the empty-record threshold that
// follow, the last one possibly in part. What follows a record it may not
// hand over (a record of another type, an empty record, a header cut
// short) moves into the read-ahead buffer and is served by the next Read.
//
// A direct read can fetch no more than the caller's buffer holds, so it is
// used only while the last socket read left room in the space it was given
// (Conn.filled is false): the socket was drained, and a read into the larger
// read-ahead buffer would most likely have returned the same bytes, one
// copy later. Small exchanges (a query and its answer) are read directly;
// a stream that keeps the socket full goes through the read-ahead buffer,
// which takes up to its whole size in one system call.

// readDirect reports whether a Read reads the socket straight into p: in
// coalescing mode for good, with nothing buffered, no sticky read error, the
// last socket read not filled, p no larger than a read-ahead buffer (which
// takes what a Read cannot hand over) and no Reader steering. Called with
// rmu held.
func (c *Conn) readDirect(p []byte) bool {
	if c.batch == 0 || c.filled || len(p) > c.pool.size || c.ra.buffered() > 0 || c.rerr != nil {
		return false
	}
	minLen, noBlock := c.steer.mode()
	return minLen == 0 && !noBlock
}

// takeDirect hands over p[:m], just read from the socket into p: it returns
// how many of those bytes the Read returns and moves the rest into the
// read-ahead buffer. Called with rmu held, with 0 < m <= len(p) and nothing
// buffered.
func (c *Conn) takeDirect(p []byte, m int) int {
	n, extra := c.ra.walk(p[:m], c.batch)
	if n < m {
		c.ra.keep(p[n:m])
	}
	c.steer.handed(extra)
	return n
}
