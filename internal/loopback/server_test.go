package loopback

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "localhost:0", "127.0.0.1"} {
		s, err := Listen(addr)
		if err == nil {
			_ = s.Close()
			t.Errorf("Listen(%q) succeeded", addr)
		}
	}
}

// TestCloseUnblocksAndWaits: Close closes the conn a handler is blocked reading, and returns
// only after the handler has returned.
func TestCloseUnblocksAndWaits(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var mu sync.Mutex
	returned := false
	if err := s.Serve(func(c net.Conn, _ int) {
		close(started)
		_, _ = io.Copy(io.Discard, c) // blocks until the conn is closed
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		returned = true
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !returned {
		t.Fatal("Close returned before the handler")
	}
	// The server closed its end: the client reads EOF (or a reset).
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("client read succeeded after Close")
	}
}

// TestHandlerReturnClosesConn: when a handler returns, the server closes its conn.
func TestHandlerReturnClosesConn(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Serve(func(c net.Conn, _ int) { _, _ = c.Write([]byte("x")) }); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "x" {
		t.Fatalf("read %q, %v; want \"x\" then EOF", b, err)
	}
}

// TestIDsInAcceptOrder: ids count from 1 in accept order.
func TestIDsInAcceptOrder(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := make(chan int, 3)
	if err := s.Serve(func(_ net.Conn, id int) { ids <- id }); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if got := <-ids; got != want {
			t.Errorf("id %d, want %d", got, want)
		}
		_ = c.Close()
	}
}

func TestTrack(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer b.Close()
	if !s.Track(a) {
		t.Fatal("Track before Close reported false")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("tracked conn after Close: write error %v, want io.ErrClosedPipe", err)
	}
	c, d := net.Pipe()
	defer d.Close()
	if s.Track(c) {
		t.Fatal("Track after Close reported true")
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("conn tracked after Close: write error %v, want io.ErrClosedPipe", err)
	}
}

func TestUntrackedConnSurvivesClose(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s.Track(a)
	s.Untrack(a)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = b.Read(make([]byte, 1)) }()
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatalf("untracked conn closed by Close: %v", err)
	}
}

func TestLifecycleErrors(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	nop := func(net.Conn, int) {}
	if err := s.Serve(nop); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(nop); err == nil {
		t.Error("second Serve succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
	if err := s.Serve(nop); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve after Close: %v, want net.ErrClosed", err)
	}
}

// TestCloseWithoutServe: a server that never served releases its port on Close.
func TestCloseWithoutServe(t *testing.T) {
	s, err := Listen("")
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Listen(addr)
	if err != nil {
		t.Fatalf("port not released: %v", err)
	}
	_ = s2.Close()
}
