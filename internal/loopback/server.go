package loopback

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Handler serves one accepted connection. id counts the server's accepted connections from 1
// in accept order. The handler owns c while it runs; the server closes c when it returns (a
// handler may close c itself first). Close closes c under a running handler to unblock it.
type Handler func(c net.Conn, id int)

// Server accepts connections on a loopback listener. Its methods may be called from several
// goroutines.
type Server struct {
	ln   net.Listener
	logf func(format string, args ...any)

	mu       sync.Mutex
	serving  bool
	closed   bool
	conns    map[net.Conn]struct{} // open conns: accepted ones and those given to Track
	accepted int                   // connections accepted so far
	wg       sync.WaitGroup        // the accept loop and one per handler
}

// Listen listens on addr, "host:port" with a loopback IP host ("" means "127.0.0.1:0", a free
// port); it refuses any other host. The server accepts nothing until Serve. The caller must
// Close it.
func Listen(addr string) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("loopback: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("loopback: address %q: want a loopback IP address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("loopback: listen: %w", err)
	}
	return &Server{ln: ln, logf: func(string, ...any) {}, conns: make(map[net.Conn]struct{})}, nil
}

// Addr returns the listening address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// SetLogf sets the function that receives accept errors (nil discards them). Call it before
// Serve.
func (s *Server) SetLogf(logf func(format string, args ...any)) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s.logf = logf
}

// Serve starts accepting connections, running h on each on its own goroutine. It returns at
// once; it fails after Close or when called a second time.
func (s *Server) Serve(h Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("loopback: Serve: %w", net.ErrClosed)
	}
	if s.serving {
		return errors.New("loopback: Serve called twice")
	}
	s.serving = true
	s.wg.Add(1)
	go s.acceptLoop(h)
	return nil
}

func (s *Server) acceptLoop(h Handler) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: log, wait a little, try again (Close ends
			// the wait by closing the listener: Accept then fails with ErrClosed).
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logf("loopback: accept: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.accepted++
		id := s.accepted
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer s.Untrack(c)
			defer c.Close()
			h(c, id)
		}()
	}
}

// Track adds c (a connection the server opened itself, such as a proxy's connection to its
// target) to the connections Close closes. After Close it closes c and reports false.
func (s *Server) Track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// Untrack removes conns from the connections Close closes; it does not close them.
func (s *Server) Untrack(conns ...net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range conns {
		delete(s.conns, c)
	}
}

// Close stops the listener, closes every tracked connection (which unblocks their handlers)
// and returns when every goroutine of the server has ended. A second Close returns an error
// matching net.ErrClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("loopback: Close: %w", net.ErrClosed)
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("loopback: Close: %w", err)
	}
	return nil
}
