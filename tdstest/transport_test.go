package tdstest

import (
	"bytes"
	"io"
	"net"
	"testing"

	"golang.org/x/net/nettest"
)

// TestSocketConn runs the net.Conn conformance tests on socket (with and without a peeked
// prefix that was already consumed by the time the tests read) over loopback TCP.
func TestSocketConn(t *testing.T) {
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, nil, err
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			accepted <- c
		}()
		d, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, nil, nil, err
		}
		a := <-accepted
		s := newSocket(a, nil)
		return s, d, func() { _ = s.Close(); _ = d.Close() }, nil
	})
}

func TestSocketPrefix(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := newSocket(a, []byte{0x12, 0x01})
	go func() { _, _ = b.Write([]byte{0x00, 0x08}) }()
	got := make([]byte, 4)
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte{0x12, 0x01, 0x00, 0x08}) {
		t.Fatalf("read % x", got)
	}
}

func TestRecordWriter(t *testing.T) {
	var writes [][]byte
	w := newRecordWriter(writerFunc(func(p []byte) (int, error) {
		writes = append(writes, append([]byte(nil), p...))
		return len(p), nil
	}), 4)
	for _, p := range []string{"ab", "cdefghij", "k"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil { // nothing left: no write
		t.Fatal(err)
	}
	want := []string{"abcd", "efgh", "ijk"}
	if len(writes) != len(want) {
		t.Fatalf("writes %q", writes)
	}
	for i := range want {
		if string(writes[i]) != want[i] {
			t.Fatalf("writes %q, want %q", writes, want)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
