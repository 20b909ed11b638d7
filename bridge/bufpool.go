package bridge

import "sync"

// bufPool hands out read-ahead buffers of one size (see readAhead for when a Conn holds one), as
// *[]byte so that get and put allocate nothing.
//
// The last spareMax buffers given back wait in spare, where a get on any processor finds them;
// the rest go to a sync.Pool, whose per-processor slots a get on another processor never sees
// (docs/design.md, "The read path", has what that cost). At most spareMax*size bytes per size
// stay allocated for good.
type bufPool struct {
	size int

	mu    sync.Mutex
	spare []*[]byte // at most spareMax, protected by mu

	pool sync.Pool
}

// spareMax is how many buffers of one size bufPool keeps outside its sync.Pool.
const spareMax = 4

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
	p.mu.Lock()
	if n := len(p.spare); n > 0 {
		b := p.spare[n-1]
		p.spare[n-1] = nil
		p.spare = p.spare[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, p.size)
	return &b
}

// put gives b back; the caller must not use it afterwards.
func (p *bufPool) put(b *[]byte) {
	p.mu.Lock()
	if len(p.spare) < spareMax {
		p.spare = append(p.spare, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.pool.Put(b)
}
