package bridge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// record returns a fake TLS record of type typ with a body of n bytes.
func record(typ byte, n int, seed int) []byte {
	return append([]byte{typ, 3, 3, byte(n >> 8), byte(n)}, pattern(n, seed)...)
}

// Write passes the caller's slice to exactly one socket Write, and
// with TLSConfig one TDS-sized tls.Conn Write is one record.
func TestPassthroughWriteNoCopy(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			craw := &countConn{Conn: c}
			b := New(craw, Options{Direct: true})
			defer b.Close()
			go io.Copy(io.Discard, s)
			p := pattern(10000, 9)
			before := craw.writes.Load()
			if n, err := b.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			craw.mu.Lock()
			last := craw.lastWrite
			craw.mu.Unlock()
			if craw.writes.Load()-before != 1 || len(last) != len(p) || &last[0] != &p[0] {
				t.Fatalf("%d socket writes; want one, of the caller's own slice", craw.writes.Load()-before)
			}

			p2 := newTLSPair(t, pairConfig{tr: tr, pki: small})
			go io.Copy(io.Discard, p2.stc)
			before = p2.craw.writes.Load()
			const packet = 4096
			if _, err := p2.ctc.Write(pattern(3*packet, 10)); err != nil {
				t.Fatal(err)
			}
			if got := p2.craw.writes.Load() - before; got != 1 {
				t.Fatalf("a 12 KiB tls Write made %d socket writes, want 1 record", got)
			}
			for i := 0; i < 3; i++ {
				before = p2.craw.writes.Load()
				if _, err := p2.ctc.Write(pattern(packet, i)); err != nil {
					t.Fatal(err)
				}
				if got := p2.craw.writes.Load() - before; got != 1 {
					t.Fatalf("a TDS packet made %d socket writes, want 1", got)
				}
			}
		})
	}
}

// Read hands out at most one record per call and knows the next
// one; plain bytes after the records are framed the same way.
func TestPassthroughOneRecordPerRead(t *testing.T) {
	for _, tr := range append(transports, memTransport) {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			b := New(c, Options{Direct: true})
			defer b.Close()
			recs := [][]byte{record(0x17, 100, 1), record(0x16, 3000, 2), record(0x17, 0, 3), record(0x15, 2, 4)}
			go s.Write(bytes.Join(recs, nil))
			buf := make([]byte, 64<<10)
			for i, want := range recs {
				var got []byte
				for len(got) < len(want) {
					n, err := b.Read(buf)
					if err != nil {
						t.Fatalf("record %d: %v", i, err)
					}
					got = append(got, buf[:n]...)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("record %d: read %d bytes, want exactly the record's %d", i, len(got), len(want))
				}
			}
		})
	}
}

// Backpressure toward the peer: the bridge reads the socket only
// for a Read that found nothing buffered, so when the reader stops, the
// bridge stops and the peer's writes stall.
func TestPassthroughReadBackpressure(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: tr, pki: small})
			const total = 64 << 20
			writeDone := make(chan int, 1)
			go func() {
				chunk := make([]byte, 16<<10)
				p.sb.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
				n := 0
				for n < total {
					m, err := p.stc.Write(chunk)
					n += m
					if err != nil {
						break
					}
				}
				writeDone <- n
			}()
			const consumed = 10 << 10
			p.cb.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(p.ctc, make([]byte, consumed)); err != nil {
				t.Fatal(err)
			}
			readBefore := p.craw.read.Load()
			if n := <-writeDone; n >= total {
				t.Fatalf("the peer wrote all %d bytes although the client stopped reading", n)
			}
			// Nothing read the socket after the last Read returned, and the
			// read-ahead is bounded by the buffer.
			if got := p.craw.read.Load(); got != readBefore || got > consumed+DefaultReadAheadSize+maxRecordLen {
				t.Fatalf("bridge read %d bytes from the socket (%d when the reader stopped), consumed %d", got, readBefore, consumed)
			}
		})
	}
}

// Backpressure toward the caller: Write blocks while the peer does
// not read, until the deadline; the timeout is not sticky.
func TestPassthroughWriteBackpressure(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			b := New(c, Options{Direct: true})
			defer b.Close()
			b.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			big := make([]byte, 32<<20)
			n, err := b.Write(big)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
				t.Fatalf("Write = %d, %v; want a timeout before all was written", n, err)
			}
			b.SetWriteDeadline(time.Time{})
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				io.CopyN(io.Discard, s, int64(n)+5)
			}()
			if _, err := b.Write([]byte("after")); err != nil {
				t.Fatalf("Write after a timeout and a new deadline: %v", err)
			}
			<-drained
		})
	}
}

// Read deadlines reach the socket and are not sticky, for the
// bridge and for the tls.Conn above it.
func TestPassthroughReadDeadline(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: tr, pki: small})
			p.cb.SetReadDeadline(time.Now().Add(-time.Second))
			_, err := p.ctc.Read(make([]byte, 10))
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("Read = %v, want a timeout", err)
			}
			p.cb.SetReadDeadline(time.Time{})
			roundTrip(t, p.stc, p.ctc, []byte("after the timeout"))
			if p.cb.State() != StatePassthrough {
				t.Fatalf("state %v", p.cb.State())
			}
		})
	}
}

// Close unblocks a Read and a Write blocked in other goroutines.
func TestCloseUnblocks(t *testing.T) {
	for _, tr := range transports {
		for _, st := range []State{StateHandshake, StatePassthrough, StatePlaintext} {
			t.Run(tr.name+"/"+st.String(), func(t *testing.T) {
				c, _ := tr.pair(t)
				b := New(c, Options{Direct: st == StatePassthrough})
				if st == StatePlaintext {
					if err := b.StartPlaintext(); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				errs := make(chan error, 2)
				wg.Add(2)
				started := make(chan struct{}, 2)
				go func() {
					defer wg.Done()
					started <- struct{}{}
					_, err := b.Read(make([]byte, 10))
					errs <- err
				}()
				go func() {
					defer wg.Done()
					started <- struct{}{}
					if st == StateHandshake {
						b.Write([]byte("flight")) // buffered; a Read sends it
						errs <- nil
						return
					}
					_, err := b.Write(make([]byte, 16<<20))
					errs <- err
				}()
				<-started
				<-started
				// Let both reach the socket; correctness does not depend on it.
				time.Sleep(20 * time.Millisecond)
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil && !errors.Is(err, net.ErrClosed) {
						t.Fatalf("blocked call returned %v, want net.ErrClosed", err)
					}
				}
				if b.State() != StateClosed {
					t.Fatalf("state %v", b.State())
				}
			})
		}
	}
}

// In passthrough the end of the socket is io.EOF for the layer
// above, after all the data.
func TestPassthroughEOF(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: tr, pki: small})
			go func() {
				p.stc.Write([]byte("last words"))
				p.sraw.Close() // no close_notify
			}()
			got, err := io.ReadAll(p.ctc)
			if err != nil || string(got) != "last words" {
				t.Fatalf("ReadAll = %q, %v; want the data and io.EOF", got, err)
			}
			if _, err := p.cb.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("bridge Read = %v, want io.EOF", err)
			}
		})
	}
}

// A sticky write error does not hide data already buffered for Read.
func TestPassthroughWriteErrorKeepsReads(t *testing.T) {
	c, s := net.Pipe()
	b := New(c, Options{Direct: true})
	defer b.Close()
	rec := record(0x17, 50, 11)
	go func() {
		s.Write(rec)
		s.Close()
	}()
	// Fill the buffer, then break the write side.
	buf := make([]byte, 10)
	if _, err := b.Read(buf); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("Write to a closed pipe succeeded")
	}
	got := append(bytes.Clone(buf), readAllConn(t, b)...)
	if !bytes.Equal(got, rec) {
		t.Fatalf("read %d bytes after a write error, want the record's %d", len(got), len(rec))
	}
	_, werr1 := b.Write([]byte("x"))
	_, werr2 := b.Write([]byte("y"))
	if werr1 == nil || werr1 != werr2 {
		t.Fatalf("write errors %v, %v; want one sticky error", werr1, werr2)
	}
}

func readAllConn(t *testing.T, c net.Conn) []byte {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TLS over a bridge in Direct mode talks to a plain tls.Conn on the other
// end (TDS 8.0: TLS first, no PRELOGIN wrapping).
func TestDirectAgainstPlainTLS(t *testing.T) {
	small, _ := pkis(t)
	c, s := tcpPair(t)
	pc := pairConfig{pki: small, tls13: true}
	ccfg, scfg := pc.configs()
	ccfg.NextProtos, scfg.NextProtos = []string{"tds/8.0"}, []string{"tds/8.0"}
	b := New(c, Options{Direct: true})
	defer b.Close()
	tc, ts := tls.Client(b, ccfg), tls.Server(s, scfg)
	handshakeBoth(t, tc, ts)
	if tc.ConnectionState().NegotiatedProtocol != "tds/8.0" {
		t.Fatal("ALPN not negotiated")
	}
	roundTrip(t, ts, NewReader(tc, b, 0), pattern(100000, 12))
	roundTrip(t, tc, ts, pattern(100000, 13))
}

// Close drops the bytes read ahead and gives the buffer back: a Read after Close fails at once
// instead of handing them out, and a Close while a Read waits on the socket leaves the buffer
// to that Read, which gives it back on its way out.
func TestCloseReleasesReadAhead(t *testing.T) {
	held := func(b *Conn) (buffered int, holds bool) {
		b.rmu.Lock()
		defer b.rmu.Unlock()
		return b.ra.buffered(), b.ra.buf != nil
	}
	// open returns a bridge in state st over one end of a pipe, and the other end.
	open := func(t *testing.T, st State) (*Conn, net.Conn) {
		c, s := memPipe()
		t.Cleanup(func() { _ = s.Close() })
		b := New(c, Options{Direct: true})
		if st == StatePlaintext {
			if err := b.StartPlaintext(); err != nil {
				t.Fatal(err)
			}
		}
		return b, s
	}
	for _, st := range []State{StatePassthrough, StatePlaintext} {
		t.Run(st.String()+"/bytes held", func(t *testing.T) {
			b, s := open(t, st)
			go func() { _, _ = s.Write(bytes.Repeat(record(0x17, 1000, 1), 3)) }()
			if _, err := io.ReadFull(b, make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			if n, holds := held(b); n == 0 || !holds {
				t.Skipf("nothing read ahead (%d bytes): the pipe delivered in pieces", n)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if n, holds := held(b); n != 0 || holds {
				t.Fatalf("after Close: %d bytes read ahead, buffer held %v", n, holds)
			}
			if n, err := b.Read(make([]byte, 100)); n != 0 || !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Read after Close: %d, %v", n, err)
			}
		})
		t.Run(st.String()+"/read waiting", func(t *testing.T) {
			b, _ := open(t, st)
			done := make(chan error, 1)
			go func() {
				_, err := b.Read(make([]byte, 10))
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, net.ErrClosed) {
				t.Fatalf("waiting Read: %v", err)
			}
			if _, holds := held(b); holds {
				t.Fatal("the buffer of the waiting Read was not given back")
			}
		})
	}
}
