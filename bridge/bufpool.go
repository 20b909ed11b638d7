package bridge

import "sync"

// bufPool hands out read-ahead buffers of one size. A Conn takes a buffer
// when a read needs the socket and gives it back as soon as every byte in
// it was handed out, so an idle connection holds no buffer. Buffers travel
// as *[]byte so that Get and Put allocate nothing.
type bufPool struct {
	size int
	pool sync.Pool
}

// bufPools holds one *bufPool per buffer size in use (Options.ReadAheadSize).
var bufPools sync.Map

// poolFor returns the pool of buffers of size bytes.
func poolFor(size int) *bufPool {
	if p, ok := bufPools.Load(size); ok {
		return p.(*bufPool)
	}
	p, _ := bufPools.LoadOrStore(size, &bufPool{size: size})
	return p.(*bufPool)
}

// get returns a buffer of p.size bytes; its contents are undefined.
func (p *bufPool) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, p.size)
	return &b
}

// put gives b back; the caller must not use it afterwards.
func (p *bufPool) put(b *[]byte) { p.pool.Put(b) }
