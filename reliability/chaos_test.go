package reliability

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
)

// TestCloseChaos closes a bridged TLS connection at random moments (during the handshake,
// while a Read and a Write are in flight, between calls), with each of the closers a user has
// (the bridge, the tls.Conn), many times over: every call must return, no panic, no race, and
// no goroutine may be left behind.
func TestCloseChaos(t *testing.T) {
	t.Parallel()
	const rounds = 60
	window := 3000 // µs
	if raceEnabled {
		window *= 5
	}
	s := bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) {
		_, _ = io.Copy(tc, tc) // echo
	})
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range rounds {
		delay := time.Duration(rng.IntN(window)) * time.Microsecond
		useTLS := rng.IntN(2) == 0
		raw, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		b := bridge.New(raw, bridge.Options{})
		tc := tls.Client(b, bridge.TLSConfig(clientTLS(t), false))
		var wg sync.WaitGroup
		ready := make(chan struct{}) // closed once the bridge is in passthrough, or gave up
		wg.Add(2)
		go func() { // reader (runs the handshake first)
			defer wg.Done()
			err := tc.Handshake()
			if err == nil {
				err = b.StartPassthrough()
			}
			close(ready)
			if err != nil {
				return
			}
			r := bridge.NewReader(tc, b, 0)
			buf := make([]byte, 32<<10)
			for {
				if _, err := r.Read(buf); err != nil {
					return
				}
			}
		}()
		go func() { // writer, once the connection is up (the tls.Conn is not for use before)
			defer wg.Done()
			<-ready
			chunk := pattern("chaos", 8<<10)
			for {
				if _, err := tc.Write(chunk); err != nil {
					return
				}
			}
		}()
		time.Sleep(delay)
		if useTLS {
			_ = tc.Close()
		} else {
			_ = b.Close()
		}
		_ = within(t, fmt.Sprintf("round %d (close after %v)", i, delay), func() error { wg.Wait(); return nil })
		_ = b.Close()
	}
}
