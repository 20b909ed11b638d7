package tds

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
)

// pipes are the ways to get a connected pair of conns: net.Pipe and
// loopback TCP.
var pipes = map[string]func(t *testing.T) (net.Conn, net.Conn){
	"net.Pipe": func(*testing.T) (net.Conn, net.Conn) { return net.Pipe() },
	"TCP": func(t *testing.T) (net.Conn, net.Conn) {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		type res struct {
			c   net.Conn
			err error
		}
		ch := make(chan res, 1)
		go func() {
			c, err := ln.Accept()
			ch <- res{c, err}
		}()
		a, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		r := <-ch
		if r.err != nil {
			a.Close()
			t.Fatal(r.err)
		}
		return a, r.c
	},
}

type testMessage struct {
	typ     PacketType
	payload []byte
}

func testMessages() []testMessage {
	sizes := []int{0, 1, 503, 504, 505, 4088, 4089, 16375, 16376, 65536, 200001}
	msgs := make([]testMessage, 0, len(sizes))
	types := []PacketType{TypeTabularResult, TypeSQLBatch, TypePrelogin, TypeRPC, TypeBulkLoad}
	for i, n := range sizes {
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(i + j*13)
		}
		msgs = append(msgs, testMessage{types[i%len(types)], p})
	}
	return msgs
}

// TestRoundTrip writes messages from one goroutine and reads them from
// another over real connections, for several packet sizes, then checks
// that the bytes after the last message are still on the connection.
func TestRoundTrip(t *testing.T) {
	msgs := testMessages()
	trailer := []byte("raw bytes after the last message")
	for name, newPipe := range pipes {
		for _, ps := range []int{MinPacketSize, DefaultPacketSize, MaxEncryptedPacketSize, MaxPacketSize} {
			t.Run(fmt.Sprintf("%s/%d", name, ps), func(t *testing.T) {
				a, b := newPipe(t)
				defer a.Close()
				defer b.Close()
				errc := make(chan error, 1)
				go func() {
					w := NewWriter(a, ps)
					w.SetSPID(52)
					for _, m := range msgs {
						if err := w.WriteMessage(m.typ, m.payload); err != nil {
							errc <- err
							return
						}
					}
					// One streamed message, written in odd-sized pieces.
					w.BeginMessage(TypeTabularResult, 0)
					for i := 0; i < 100; i++ {
						if _, err := w.Write(bytes.Repeat([]byte{byte(i)}, i*37)); err != nil {
							errc <- err
							return
						}
					}
					if err := w.EndMessage(); err != nil {
						errc <- err
						return
					}
					_, err := a.Write(trailer)
					errc <- err
				}()
				r := NewReader(b, ReaderConfig{MaxPacketSize: ps})
				for i, m := range msgs {
					typ, p, err := r.ReadMessage()
					if err != nil {
						t.Fatalf("message %d: %v", i, err)
					}
					if typ != m.typ || !bytes.Equal(p, m.payload) {
						t.Fatalf("message %d: got %v with %d bytes, want %v with %d", i, typ, len(p), m.typ, len(m.payload))
					}
				}
				var want []byte
				for i := 0; i < 100; i++ {
					want = append(want, bytes.Repeat([]byte{byte(i)}, i*37)...)
				}
				if _, p, err := r.ReadMessage(); err != nil || !bytes.Equal(p, want) {
					t.Fatalf("streamed message: %d bytes, %v; want %d", len(p), err, len(want))
				}
				rest := make([]byte, len(trailer))
				if _, err := io.ReadFull(b, rest); err != nil || !bytes.Equal(rest, trailer) {
					t.Fatalf("after the messages the conn holds %q, %v; want %q", rest, err, trailer)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestRoundTripPackets checks packet by packet over the wire: headers as
// written (SPID, PacketID, EOM only on the last) and a clean io.EOF when
// the writer closes its side.
func TestRoundTripPackets(t *testing.T) {
	for name, newPipe := range pipes {
		t.Run(name, func(t *testing.T) {
			a, b := newPipe(t)
			defer b.Close()
			errc := make(chan error, 1)
			go func() {
				w := NewWriter(a, 512)
				w.SetSPID(0x0102)
				err := w.WriteMessage(TypeTabularResult, make([]byte, 300*504)) // 300 packets: PacketID wraps
				if cerr := a.Close(); err == nil {
					err = cerr
				}
				errc <- err
			}()
			r := NewReader(b, ReaderConfig{MaxPacketSize: 512})
			for i := 0; i < 300; i++ {
				h, body, err := r.ReadPacket()
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				wantStatus := Status(0)
				if i == 299 {
					wantStatus = StatusEOM
				}
				want := Header{Type: TypeTabularResult, Status: wantStatus, Length: 512, SPID: 0x0102, PacketID: uint8(i + 1)}
				if h != want || len(body) != 504 {
					t.Fatalf("packet %d: %+v with %d bytes, want %+v", i, h, len(body), want)
				}
			}
			if _, _, err := r.ReadPacket(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the writer closed: %v, want io.EOF", err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRoundTripTruncatedByClose: a peer that closes mid-message yields
// ErrTruncatedPacket, not io.EOF.
func TestRoundTripTruncatedByClose(t *testing.T) {
	for name, newPipe := range pipes {
		t.Run(name, func(t *testing.T) {
			a, b := newPipe(t)
			defer b.Close()
			errc := make(chan error, 1)
			go func() {
				_, err := a.Write(preloginPacket[:30])
				if cerr := a.Close(); err == nil {
					err = cerr
				}
				errc <- err
			}()
			r := NewReader(b, ReaderConfig{Allowed: Types(TypePrelogin)})
			_, _, err := r.ReadMessage()
			if !errors.Is(err, ErrTruncatedPacket) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("err = %v, want ErrTruncatedPacket", err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}
