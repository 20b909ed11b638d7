package main

import (
	"errors"
	"io"
	"log"
	"net"
	"sync"
)

// relay accepts connections on ln and joins each to a new connection to the server at target,
// copying bytes both ways unchanged, so that a server that listens only on loopback can be
// reached from outside a container's network namespace (see the -relay flag). It returns when
// ln is closed, after every joined pair has ended.
func relay(ln net.Listener, target string) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Printf("relay: accept: %v", err)
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			join(c, target)
		}()
	}
}

// join copies between c and a new connection to target until both directions have ended. The
// end of one direction (EOF) is passed on as a half-close, so that a peer that closes its write
// side still reads the rest; an error in either direction closes both connections.
func join(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		log.Printf("relay: %v", err)
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyHalf(s, c)
	}()
	copyHalf(c, s)
	<-done
}

// copyHalf copies src to dst, then half-closes dst after EOF, or closes both after an error.
func copyHalf(dst, src net.Conn) {
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		_ = src.Close()
		return
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = dst.Close()
}
