package bridge

import (
	"io"
	"net"
	"sync"
	"time"
)

// memPipe returns two connected in-memory conns with unbounded buffers:
// a Write never blocks and everything written is available to the other
// side at once, so a test can put many records "in the socket" before the
// reader looks. Deadlines are accepted and ignored.
func memPipe() (net.Conn, net.Conn) {
	a2b, b2a := newMemBuf(), newMemBuf()
	return &memConn{r: b2a, w: a2b}, &memConn{r: a2b, w: b2a}
}

type memBuf struct {
	mu     sync.Mutex
	cond   *sync.Cond
	data   []byte
	closed bool
}

func newMemBuf() *memBuf {
	b := &memBuf{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *memBuf) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

type memConn struct {
	r, w *memBuf
	once sync.Once
}

func (c *memConn) Read(p []byte) (int, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	for len(c.r.data) == 0 && !c.r.closed {
		c.r.cond.Wait()
	}
	if len(c.r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.r.data)
	c.r.data = c.r.data[n:]
	return n, nil
}

func (c *memConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.w.closed {
		return 0, io.ErrClosedPipe
	}
	c.w.data = append(c.w.data, p...)
	c.w.cond.Broadcast()
	return len(p), nil
}

func (c *memConn) Close() error {
	c.once.Do(func() { c.r.close(); c.w.close() })
	return nil
}

func (c *memConn) LocalAddr() net.Addr                { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr               { return memAddr{} }
func (c *memConn) SetDeadline(t time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }
