package bridge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
)

// loopConn is a net.Conn whose Reads serve stream over and over, filling
// the caller's slice; Writes are dropped.
type loopConn struct {
	net.Conn
	stream []byte
	off    int
}

func (c *loopConn) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m := copy(p[n:], c.stream[c.off:])
		n += m
		c.off = (c.off + m) % len(c.stream)
	}
	return n, nil
}

// A buffer given back is the next one handed out, whichever goroutine (and
// so processor) asks, and what bufPool keeps outside its sync.Pool is
// bounded by spareMax.
func TestBufPoolSpare(t *testing.T) {
	p := &bufPool{size: 1024}
	b := p.get()
	for i := range 100 {
		done := make(chan struct{})
		go func() { p.put(b); close(done) }()
		<-done
		if got := p.get(); got != b {
			t.Fatalf("round %d: the buffer given back on another goroutine was not handed out again", i)
		}
	}
	var bufs []*[]byte
	for range spareMax + 3 {
		bufs = append(bufs, p.get())
	}
	for _, b := range bufs {
		if len(*b) != p.size {
			t.Fatalf("buffer of %d bytes, want %d", len(*b), p.size)
		}
		p.put(b)
	}
	if len(p.spare) != spareMax {
		t.Fatalf("%d spare buffers kept, want at most %d", len(p.spare), spareMax)
	}
	for i := range spareMax {
		if got := p.get(); got != bufs[spareMax-1-i] {
			t.Fatalf("get %d: not the spare buffer put back last", i)
		}
	}
}

// The read-ahead keeps its configured size whatever the peer sent during
// the handshake: a seed larger than the buffer is served as it is, and
// once drained the buffer taken for the next read has the configured size.
func TestReadAheadSeedKeepsSize(t *testing.T) {
	var seed []byte
	for i := range 40 { // 40 records of 8 KiB: 320 KiB, five times the buffer
		seed = append(seed, record(0x17, 8<<10, i)...)
	}
	var ra readAhead
	ra.init(poolFor(DefaultReadAheadSize), bytes.Clone(seed))
	var got []byte
	p := make([]byte, 20<<10)
	for ra.buffered() > 0 {
		n := ra.readRecord(p)
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, seed) {
		t.Fatalf("served %d bytes, want the %d-byte seed", len(got), len(seed))
	}
	if ra.buf != nil {
		t.Fatalf("drained seed still held (%d bytes)", len(ra.buf))
	}
	next := record(0x17, 100, 99)
	if err := ra.testFill(&chunks{next}); err != nil {
		t.Fatal(err)
	}
	if len(ra.buf) != DefaultReadAheadSize {
		t.Fatalf("buffer after the seed: %d bytes, want the configured %d", len(ra.buf), DefaultReadAheadSize)
	}
	if n := ra.readRecord(p); !bytes.Equal(p[:n], next) {
		t.Fatalf("record after the seed: %d bytes", n)
	}
}

// A Conn holds a read-ahead buffer only while bytes are buffered: after
// the layer above has read everything, the buffer is back in the pool.
func TestConnReleasesBuffer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plain bool
	}{{"passthrough", false}, {"plaintext", true}} {
		t.Run(tt.name, func(t *testing.T) {
			c, s := memPipe()
			b := New(c, Options{Direct: true})
			defer b.Close()
			defer s.Close()
			if tt.plain {
				if err := b.StartPlaintext(); err != nil {
					t.Fatal(err)
				}
			}
			recs := append(record(0x17, 1000, 1), record(0x17, 1000, 2)...)
			if _, err := s.Write(recs); err != nil {
				t.Fatal(err)
			}
			held := func() bool {
				b.rmu.Lock()
				defer b.rmu.Unlock()
				return b.ra.buf != nil
			}
			got := readN(t, b, 1005, 1005)
			if !held() {
				t.Fatal("no buffer while a record is still buffered")
			}
			got = append(got, readN(t, b, len(recs)-len(got), 1500)...)
			if !bytes.Equal(got, recs) {
				t.Fatal("bytes differ")
			}
			if held() {
				t.Fatal("buffer still held after everything was read")
			}
		})
	}
}

// The bridge allocates nothing per record in passthrough mode, with and
// without coalescing (sync.Pool drops Puts on purpose under the race
// detector, so the count is only checked without it).
func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	var stream []byte
	for i := range 7 {
		stream = append(stream, record(0x17, 4096+24, i)...)
	}
	for _, coalesce := range []bool{false, true} {
		b := New(&loopConn{stream: stream}, Options{Direct: true})
		if coalesce {
			if err := b.CoalesceRecords(tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS12,
				CipherSuite: tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}); err != nil {
				t.Fatal(err)
			}
		}
		p := make([]byte, 20<<10)
		read := 0
		allocs := testing.AllocsPerRun(2000, func() {
			n, err := b.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			read += n
		})
		// One buffer may be allocated when a garbage collection emptied
		// the pool between runs: allow well under one per hundred reads.
		if allocs > 0.01 {
			t.Errorf("coalesce=%v: %.3f allocations per Read, want 0", coalesce, allocs)
		}
		if read < 1000*4096 { // a record per Read, some split at the end of the buffer
			t.Errorf("coalesce=%v: read %d bytes in 2000 Reads", coalesce, read)
		}
	}
}

// CoalesceRecords hands several approved records per Read, stops in front
// of a record of another type, and refuses what its contract excludes.
func TestCoalesceRecords(t *testing.T) {
	cs := tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS13}
	c, s := memPipe()
	b := New(c, Options{Direct: true})
	defer b.Close()
	defer s.Close()
	if err := b.CoalesceRecords(tls.ConnectionState{}); !errors.Is(err, ErrHandshakeIncomplete) {
		t.Fatalf("CoalesceRecords before the handshake: %v, want ErrHandshakeIncomplete", err)
	}
	if err := b.CoalesceRecords(cs); err != nil {
		t.Fatal(err)
	}
	r1, r2, r3, alert := record(0x17, 500, 1), record(0x17, 500, 2), record(0x17, 17, 3), record(0x15, 2, 4)
	r4 := record(0x17, 500, 5)
	if _, err := s.Write(bytes.Join([][]byte{r1, r2, r3, alert, r4}, nil)); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	// r3 is an empty TLS 1.3 record at most: not coalesced. A record of
	// another type is handed only as the first of a Read.
	for i, want := range [][]byte{append(bytes.Clone(r1), r2...), r3, append(bytes.Clone(alert), r4...)} {
		n, err := b.Read(p)
		if err != nil || !bytes.Equal(p[:n], want) {
			t.Fatalf("Read %d = %d bytes, %v; want %d bytes", i, n, err, len(want))
		}
	}
	// A buffer that ends inside an application-data record hands its start
	// too; the read for the rest gets the records after it in the same call.
	r5, r6, r7 := record(0x17, 500, 6), record(0x17, 500, 7), record(0x17, 500, 8)
	if _, err := s.Write(append(bytes.Clone(r5), r6[:200]...)); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Read(p); err != nil || !bytes.Equal(p[:n], append(bytes.Clone(r5), r6[:200]...)) {
		t.Fatalf("Read with a partial record at the end = %d bytes, %v; want %d", n, err, len(r5)+200)
	}
	if _, err := s.Write(append(bytes.Clone(r6[200:]), r7...)); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Read(p); err != nil || !bytes.Equal(p[:n], append(bytes.Clone(r6[200:]), r7...)) {
		t.Fatalf("Read of the rest = %d bytes, %v; want %d", n, err, len(r6)-200+len(r7))
	}
	if err := b.StartPlaintext(); !errors.Is(err, ErrState) {
		t.Fatalf("StartPlaintext after CoalesceRecords: %v, want ErrState", err)
	}
	h := New(c, Options{})
	if err := h.CoalesceRecords(cs); !errors.Is(err, ErrState) {
		t.Fatalf("CoalesceRecords in handshake mode: %v, want ErrState", err)
	}
}

// sizedConn returns its scripted chunks, one per Read (or what fits), and
// records the size of every Read.
type sizedConn struct {
	net.Conn
	chunks [][]byte
	sizes  []int
}

func (c *sizedConn) Read(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// After CoalesceRecords the socket is read only into the read-ahead
// buffer, once per Read that finds nothing buffered, and the bytes come
// out as sent whatever the socket's pieces.
func TestCoalesceScriptedReads(t *testing.T) {
	var stream []byte
	for i := range 8 {
		stream = append(stream, record(0x17, 495, i)...) // 500 bytes each
	}
	sock := &sizedConn{chunks: [][]byte{stream[:500], stream[500:3500], stream[3500:4000]}}
	b := New(sock, Options{Direct: true})
	if err := b.CoalesceRecords(tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS13}); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 2000)
	var got []byte
	for len(got) < len(stream) {
		n, err := b.Read(p)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, stream) {
		t.Fatal("bytes differ")
	}
	want := []int{DefaultReadAheadSize, DefaultReadAheadSize, DefaultReadAheadSize}
	if !slices.Equal(sock.sizes, want) {
		t.Fatalf("socket reads of %v bytes, want %v", sock.sizes, want)
	}
}
