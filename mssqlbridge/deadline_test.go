package mssqlbridge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/tds"
)

// countingSocket is a net.Conn whose Reads serve data in reads of at most max bytes; it counts
// the reads. Only Read may be called.
type countingSocket struct {
	net.Conn
	data  []byte
	max   int
	reads int
}

func (r *countingSocket) Read(p []byte) (int, error) {
	r.reads++
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.max)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// tdsStream returns n packets of size bytes each.
func tdsStream(n, size int) []byte {
	var out []byte
	body := bytes.Repeat([]byte{0xAB}, size-tds.HeaderSize)
	for range n {
		out = append(out, packet(tds.TypeTabularResult, body)...)
	}
	return out
}

// plainBridge returns a bridge in plaintext mode over src seen through socket, as the
// conn reads an unencrypted connection, and the deadline's count of socket deadline changes.
func plainBridge(t *testing.T, src net.Conn) (*bridge.Conn, *deadline, *int) {
	t.Helper()
	sets := new(int)
	dl := &deadline{set: func(time.Time) error { *sets++; return nil }}
	b := bridge.New(&socket{Conn: src, rdl: dl, out: new(batch), lastRead: new(atomic.Int64)}, bridge.Options{})
	if err := b.StartPlaintext(); err != nil {
		t.Fatal(err)
	}
	return b, dl, sets
}

// TestDeadlineDriverPattern reads packets the way go-mssqldb does (SetDeadline, 8-byte header,
// SetDeadline, body) and checks that the socket is read once per 64 KiB and the deadline
// reaches the socket once per socket read, not once per driver call.
func TestDeadlineDriverPattern(t *testing.T) {
	const packets, size = 256, 4096 // 1 MiB
	src := &countingSocket{data: tdsStream(packets, size), max: 1 << 20}
	b, dl, sets := plainBridge(t, src)
	hdr := make([]byte, tds.HeaderSize)
	body := make([]byte, size)
	for i := range packets {
		_ = dl.store(time.Now().Add(time.Minute))
		if _, err := io.ReadFull(b, hdr); err != nil {
			t.Fatalf("packet %d header: %v", i, err)
		}
		h, err := tds.ParseHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		_ = dl.store(time.Now().Add(time.Minute))
		if _, err := io.ReadFull(b, body[:int(h.Length)-tds.HeaderSize]); err != nil {
			t.Fatalf("packet %d body: %v", i, err)
		}
	}
	wantReads := packets * size / bridge.DefaultReadAheadSize
	if src.reads != wantReads {
		t.Errorf("socket reads: %d, want %d", src.reads, wantReads)
	}
	if *sets != wantReads {
		t.Errorf("deadlines given to the socket: %d, want %d (one per socket read)", *sets, wantReads)
	}
	if _, err := b.Read(hdr); err != io.EOF {
		t.Errorf("after the stream: %v, want io.EOF", err)
	}
}

// TestDeadlineBuffered: bytes already buffered are served after the read deadline has passed;
// the next read that needs the socket times out without touching it.
func TestDeadlineBuffered(t *testing.T) {
	src := &countingSocket{data: tdsStream(2, 4096), max: 4096}
	b, dl, _ := plainBridge(t, src)
	hdr := make([]byte, tds.HeaderSize)
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatal(err)
	}
	_ = dl.store(time.Unix(1, 0))
	body := make([]byte, 4096-tds.HeaderSize)
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatalf("buffered body after the deadline: %v", err)
	}
	if _, err := b.Read(hdr); !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
		t.Fatalf("read that needs the socket after the deadline: %v, want a timeout", err)
	}
	if src.reads != 1 {
		t.Fatalf("socket reads: %d, want 1 (none after the deadline)", src.reads)
	}
	_ = dl.store(time.Time{})
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatalf("after clearing the deadline: %v", err)
	}
}

// BenchmarkSetDeadline compares the conn's SetDeadline (stored, applied lazily) with setting
// the deadline on a TCP socket, which go-mssqldb does before every Read and Write when a
// connection timeout is set.
func BenchmarkSetDeadline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	if peer := <-done; peer != nil {
		defer peer.Close()
	}
	b.Run("socket", func(b *testing.B) {
		for b.Loop() {
			_ = raw.SetDeadline(time.Now().Add(time.Minute))
		}
	})
	c := newConn(context.Background(), raw, &settings{}, "localhost")
	b.Run("stored", func(b *testing.B) {
		for b.Loop() {
			_ = c.SetDeadline(time.Now().Add(time.Minute))
		}
	})
}

func TestEncodeDeadline(t *testing.T) {
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Now()
	for _, tc := range []struct {
		in   time.Time
		want time.Time
	}{
		{time.Time{}, time.Time{}},
		{time.Unix(1, 0), time.Unix(1, 0)},
		{time.Date(2, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 1)}, // long ago: still the past
		{now, now},
		{far, time.Unix(0, math.MaxInt64)}, // beyond 2262: still the far future
	} {
		if got := decodeDeadline(encodeDeadline(tc.in)); !got.Equal(tc.want) {
			t.Errorf("round trip of %v: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestDeadlineAppliedWhileInflight: a deadline stored while a call is at the socket reaches
// the socket at once; one stored while none is waits for the next call.
func TestDeadlineAppliedWhileInflight(t *testing.T) {
	var got []time.Time
	d := &deadline{set: func(t time.Time) error { got = append(got, t); return nil }}
	t1 := time.Now().Add(time.Hour)
	_ = d.store(t1)
	if len(got) != 0 {
		t.Fatalf("applied without a call: %v", got)
	}
	if err := d.enter(); err != nil {
		t.Fatal(err)
	}
	t2 := t1.Add(time.Minute)
	_ = d.store(t2)
	d.exit()
	if len(got) != 2 || !got[0].Equal(t1) || !got[1].Equal(t2) {
		t.Fatalf("applied %v, want [%v %v]", got, t1, t2)
	}
	if err := d.enter(); err != nil { // unchanged: not applied again
		t.Fatal(err)
	}
	d.exit()
	_ = d.store(time.Unix(1, 0))
	if err := d.enter(); !isTimeout(err) {
		t.Fatalf("enter with a past deadline: %v, want a timeout", err)
	}
	d.exit()
	if len(got) != 2 {
		t.Fatalf("a past deadline reached the socket: %v", got)
	}
}
