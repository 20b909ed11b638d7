package main

import (
	"io"
	"net"
	"sync"
)

// forwarder accepts connections on a listener and relays each, byte for byte in both
// directions, to a backend address. -serve uses it to expose the tdstest server (which listens
// on a loopback port of its own choosing) at the address the user asked for. TLS runs end to end
// through it.
type forwarder struct {
	ln      net.Listener
	backend string
	logf    func(format string, args ...any)
	wg      sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// startForwarder starts relaying connections of ln to backend.
func startForwarder(ln net.Listener, backend string, logf func(string, ...any)) *forwarder {
	f := &forwarder{ln: ln, backend: backend, logf: logf, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	return f
}

func (f *forwarder) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go f.relay(c)
	}
}

// relay connects c to the backend and copies both ways until either side ends, then closes both.
func (f *forwarder) relay(c net.Conn) {
	defer f.wg.Done()
	b, err := net.Dial("tcp", f.backend)
	if err != nil {
		f.logf("forward %s: %v", c.RemoteAddr(), err)
		_ = c.Close()
		return
	}
	if !f.track(c, b) {
		_ = c.Close()
		_ = b.Close()
		return
	}
	defer f.untrack(c, b)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(b, c)
	go cp(c, b)
	<-done
	_ = c.Close()
	_ = b.Close()
	<-done
}

// track records a relayed pair; it reports false once the forwarder is closed.
func (f *forwarder) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *forwarder) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		delete(f.conns, c)
	}
}

// Close stops accepting, closes every relayed connection and waits for the relays to end.
func (f *forwarder) Close() error {
	err := f.ln.Close()
	f.mu.Lock()
	f.closed = true
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return err
}
