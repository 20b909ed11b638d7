package wiretest

import (
	"net"
	"sync/atomic"
)

// CountingConn is a net.Conn that counts the bytes that went through its Read and Write. The
// counters may be read from any goroutine while the conn is in use.
type CountingConn struct {
	net.Conn
	read, written atomic.Int64
}

// NewCountingConn wraps c.
func NewCountingConn(c net.Conn) *CountingConn { return &CountingConn{Conn: c} }

// Read reads from the wrapped conn and counts what it returned.
func (c *CountingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// Write writes to the wrapped conn and counts what it accepted.
func (c *CountingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// BytesRead returns the number of bytes Read has returned so far.
func (c *CountingConn) BytesRead() int64 { return c.read.Load() }

// BytesWritten returns the number of bytes the wrapped conn has accepted so far.
func (c *CountingConn) BytesWritten() int64 { return c.written.Load() }
