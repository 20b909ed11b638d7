package mssqlbridge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"
	"golang.org/x/net/nettest"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// TestNetConn runs nettest.TestConn against the bridged conn after the PRELOGIN exchange in
// plaintext mode, over loopback TCP: basic I/O, racy reads and writes, past, present and
// future deadlines, Close unblocking calls, concurrent methods.
//
// The TLS modes cannot pass nettest's FutureTimeout, and neither can a plain tls.Conn: a write
// that times out after part of a TLS record reached the socket leaves the stream corrupt, so
// crypto/tls keeps that error for every later Write (go-mssqldb then discards the
// connection). TestNetConnTLS checks everything else for them.
func TestNetConn(t *testing.T) {
	pki := newTestPKI(t)
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		return makePipe(t, pki, msdsn.EncryptionDisabled)
	})
}

// TestNetConnTLS checks the net.Conn contract in full and strict mode: bulk I/O both ways at
// once, concurrent reads and writes, a past deadline failing calls without breaking the
// connection, a deadline set while a Read is blocked interrupting it, Close unblocking a
// blocked Read and Write, and methods called concurrently.
func TestNetConnTLS(t *testing.T) {
	pki := newTestPKI(t)
	for _, mode := range []struct {
		name string
		enc  msdsn.Encryption
	}{
		{"full", msdsn.EncryptionRequired},
		{"strict", msdsn.EncryptionStrict},
	} {
		t.Run(mode.name, func(t *testing.T) {
			pipe := func(t *testing.T) (net.Conn, net.Conn) {
				c1, c2, stop, err := makePipe(t, pki, mode.enc)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(stop)
				return c1, c2
			}
			t.Run("BulkBothWays", func(t *testing.T) {
				c1, c2 := pipe(t)
				want := make([]byte, 1<<20)
				_, _ = rand.NewChaCha8([32]byte{1}).Read(want)
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); _, _ = io.Copy(c2, c2) }() // echo
				go func() {
					defer wg.Done()
					for p := want; len(p) > 0; {
						n := min(len(p), 4096)
						if _, err := c1.Write(p[:n]); err != nil {
							t.Errorf("write: %v", err)
							return
						}
						p = p[n:]
					}
				}()
				got := make([]byte, len(want))
				if _, err := io.ReadFull(c1, got); err != nil {
					t.Fatalf("read: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Fatal("echoed data differs")
				}
				_ = c1.Close()
				wg.Wait()
			})
			t.Run("RacyReadWrite", func(t *testing.T) {
				c1, c2 := pipe(t)
				go func() { _, _ = io.Copy(c2, c2) }()
				const writers, writes, size = 8, 50, 512
				var (
					wwg, rwg sync.WaitGroup
					read     atomic.Int64
				)
				for range writers {
					wwg.Add(1)
					go func() {
						defer wwg.Done()
						for range writes {
							if _, err := c1.Write(make([]byte, size)); err != nil {
								t.Errorf("write: %v", err)
								return
							}
						}
					}()
					rwg.Add(1)
					go func() {
						defer rwg.Done()
						buf := make([]byte, 700)
						for {
							n, err := c1.Read(buf)
							read.Add(int64(n))
							if err != nil {
								return
							}
						}
					}()
				}
				wwg.Wait()
				for deadline := time.Now().Add(10 * time.Second); read.Load() < writers*writes*size && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				if got := read.Load(); got != writers*writes*size {
					t.Errorf("read %d bytes, want %d", got, writers*writes*size)
				}
				_ = c1.Close() // unblocks the readers
				rwg.Wait()
			})
			t.Run("PastDeadline", func(t *testing.T) {
				c1, c2 := pipe(t)
				go func() { _, _ = io.Copy(c2, c2) }()
				roundTripBytes(t, c1)
				_ = c1.SetDeadline(time.Unix(1, 0))
				if n, err := c1.Write([]byte("x")); n != 0 || !isTimeout(err) {
					t.Fatalf("write past deadline: %d, %v; want 0 and a timeout", n, err)
				}
				if n, err := c1.Read(make([]byte, 8)); n != 0 || !isTimeout(err) {
					t.Fatalf("read past deadline: %d, %v; want 0 and a timeout", n, err)
				}
				_ = c1.SetDeadline(time.Time{})
				roundTripBytes(t, c1)
			})
			t.Run("PresentDeadline", func(t *testing.T) {
				c1, c2 := pipe(t)
				errc := make(chan error, 1)
				go func() {
					_, err := c1.Read(make([]byte, 8))
					errc <- err
				}()
				time.Sleep(20 * time.Millisecond) // let the Read block (the test passes either way)
				_ = c1.SetReadDeadline(time.Now())
				if err := <-errc; !isTimeout(err) {
					t.Fatalf("blocked read: %v, want a timeout", err)
				}
				_ = c1.SetReadDeadline(time.Time{})
				go func() { _, _ = io.Copy(c2, c2) }()
				roundTripBytes(t, c1)
			})
			t.Run("CloseUnblocks", func(t *testing.T) {
				c1, _ := pipe(t)
				errc := make(chan error, 2)
				go func() {
					_, err := c1.Read(make([]byte, 8))
					errc <- err
				}()
				go func() {
					var err error
					for err == nil { // nobody reads c2: the socket buffers fill, then Write blocks
						_, err = c1.Write(make([]byte, 16000))
					}
					errc <- err
				}()
				time.Sleep(20 * time.Millisecond)
				if err := c1.Close(); err != nil {
					t.Fatalf("close: %v", err)
				}
				for range 2 {
					if err := <-errc; !errors.Is(err, net.ErrClosed) {
						t.Errorf("call unblocked by Close: %v, want net.ErrClosed", err)
					}
				}
				if err := c1.Close(); !errors.Is(err, net.ErrClosed) {
					t.Errorf("second Close: %v, want net.ErrClosed", err)
				}
			})
			t.Run("ConcurrentMethods", func(t *testing.T) {
				c1, c2 := pipe(t)
				go func() { _, _ = io.Copy(c2, c2) }()
				var wg, rwg sync.WaitGroup
				for range 4 {
					wg.Add(2)
					go func() {
						defer wg.Done()
						for range 100 {
							_ = c1.SetDeadline(time.Now().Add(time.Minute))
							_ = c1.SetReadDeadline(time.Now().Add(time.Minute))
							_ = c1.SetWriteDeadline(time.Now().Add(time.Minute))
							_, _ = c1.LocalAddr(), c1.RemoteAddr()
						}
					}()
					go func() {
						defer wg.Done()
						for range 100 {
							_, _ = c1.Write([]byte("ping"))
						}
					}()
					rwg.Add(1)
					go func() {
						defer rwg.Done()
						buf := make([]byte, 64)
						for {
							if _, err := c1.Read(buf); err != nil {
								return
							}
						}
					}()
				}
				wg.Wait()
				_ = c1.Close()
				rwg.Wait()
			})
		})
	}
}

// roundTripBytes writes a message to an echoing peer and reads it back.
func roundTripBytes(t *testing.T, c net.Conn) {
	t.Helper()
	msg := []byte("Hello, world!")
	if _, err := c.Write(msg); err != nil {
		t.Fatalf("roundtrip write: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("roundtrip read: %q, %v", got, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// makePipe returns a negotiated bridged conn (c1) and the server's end (c2): the socket in
// plaintext, a tls.Conn over a server bridge otherwise.
func makePipe(t *testing.T, pki *testPKI, enc msdsn.Encryption) (net.Conn, net.Conn, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, err
	}
	type result struct {
		c   net.Conn
		err error
	}
	srv := make(chan result, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			srv <- result{nil, err}
			return
		}
		c, err := serverEnd(raw, pki, enc)
		if err != nil {
			_ = raw.Close()
		}
		srv <- result{c, err}
	}()
	c, err := dialTest(t, testSettings(t, pki, enc), ln.Addr().String())
	if err == nil {
		_, err = c.Write(clientPrelogin())
	}
	if err == nil {
		_, _, err = tds.NewReader(c, tds.ReaderConfig{}).ReadMessage()
	}
	r := <-srv
	if err == nil {
		err = r.err
	}
	if err != nil {
		if c != nil {
			_ = c.Close()
		}
		if r.c != nil {
			_ = r.c.Close()
		}
		_ = ln.Close()
		return nil, nil, nil, err
	}
	stop := func() {
		_ = c.Close()
		_ = r.c.Close()
		_ = ln.Close()
	}
	return c, r.c, stop, nil
}

// serverEnd runs the server side of the PRELOGIN exchange on raw and returns the conn to
// exchange application bytes on.
func serverEnd(raw net.Conn, pki *testPKI, enc msdsn.Encryption) (net.Conn, error) {
	cfg := &tls.Config{Certificates: []tls.Certificate{pki.leaf}}
	reply := func(w net.Conn, rd *tds.Reader, e prelogin.Encryption) error {
		if _, _, err := rd.ReadMessage(); err != nil {
			return err
		}
		return tds.NewWriter(w, tds.DefaultPacketSize).WriteMessage(tds.TypeTabularResult, serverReplyPayload(e))
	}
	switch enc {
	case msdsn.EncryptionDisabled:
		return raw, reply(raw, tds.NewReader(raw, tds.ReaderConfig{}), prelogin.EncryptNotSup)
	case msdsn.EncryptionStrict:
		cfg.NextProtos = []string{"tds/8.0"}
		ts := tls.Server(bridge.New(raw, bridge.Options{Role: bridge.RoleServer, Direct: true}), cfg)
		if err := ts.Handshake(); err != nil {
			return nil, err
		}
		return ts, reply(ts, tds.NewReader(ts, tds.ReaderConfig{}), prelogin.EncryptOn)
	default:
		if err := reply(raw, tds.NewReader(raw, tds.ReaderConfig{}), prelogin.EncryptOn); err != nil {
			return nil, err
		}
		b, ts := bridge.Server(raw, cfg, bridge.Options{})
		if err := ts.Handshake(); err != nil {
			return nil, err
		}
		return ts, b.StartPassthrough()
	}
}
