package mssqlbridge

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestDialParallel: with MultiSubnetFailover, every address is dialed at once and the first
// connection wins; when all fail the errors are joined.
func TestDialParallel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	// A closed port on another loopback address: refused at once.
	dead, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("127.0.0.2 not available:", err)
	}
	_ = dead.Close()

	d := &dialer{s: &settings{multiIP: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ips := []net.IPAddr{{IP: net.IPv4(127, 0, 0, 2)}, {IP: net.IPv4(127, 0, 0, 1)}}
	c, err := d.dialParallel(ctx, "tcp", ips, port)
	if err != nil {
		t.Fatalf("dialParallel: %v", err)
	}
	if got := c.RemoteAddr().String(); got != ln.Addr().String() {
		t.Errorf("connected to %s, want %s", got, ln.Addr())
	}
	_ = c.Close()
	if s := <-accepted; s != nil {
		_ = s.Close()
	}
	_ = ln.Close()

	if _, err := d.dialParallel(ctx, "tcp", ips, port); err == nil {
		t.Fatal("dialParallel succeeded with nothing listening")
	}
}
