package tds

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

var benchPacketSizes = []int{4 << 10, 16 << 10}

// BenchmarkWritePacket writes one-packet messages of a full packet each.
func BenchmarkWritePacket(b *testing.B) {
	for _, ps := range benchPacketSizes {
		b.Run(fmt.Sprintf("%dKiB", ps>>10), func(b *testing.B) {
			w := NewWriter(io.Discard, ps)
			payload := make([]byte, ps-HeaderSize)
			b.SetBytes(int64(ps))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WriteMessage(TypeTabularResult, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteMessage256KiB writes 256 KiB messages in full packets.
func BenchmarkWriteMessage256KiB(b *testing.B) {
	for _, ps := range benchPacketSizes {
		b.Run(fmt.Sprintf("%dKiB", ps>>10), func(b *testing.B) {
			w := NewWriter(io.Discard, ps)
			payload := make([]byte, 256<<10)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WriteMessage(TypeTabularResult, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchStream returns a Reader over an endless repetition of one message
// of msgSize payload bytes in packets of ps bytes, after one warm-up read
// that sizes its buffer (so the loop measures the steady state).
func benchStream(b *testing.B, ps, msgSize int) *Reader {
	var wire bytes.Buffer
	if err := NewWriter(&wire, ps).WriteMessage(TypeTabularResult, make([]byte, msgSize)); err != nil {
		b.Fatal(err)
	}
	r := NewReader(&loopReader{data: wire.Bytes()}, ReaderConfig{MaxPacketSize: ps})
	if _, _, err := r.ReadMessage(); err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkReadPacket reads full packets.
func BenchmarkReadPacket(b *testing.B) {
	for _, ps := range benchPacketSizes {
		b.Run(fmt.Sprintf("%dKiB", ps>>10), func(b *testing.B) {
			r := benchStream(b, ps, ps-HeaderSize)
			b.SetBytes(int64(ps))
			b.ReportAllocs()
			for b.Loop() {
				if _, body, err := r.ReadPacket(); err != nil || len(body) != ps-HeaderSize {
					b.Fatal(len(body), err)
				}
			}
		})
	}
}

// BenchmarkReadMessage reads one-packet messages of a full packet each.
func BenchmarkReadMessage(b *testing.B) {
	for _, ps := range benchPacketSizes {
		b.Run(fmt.Sprintf("%dKiB", ps>>10), func(b *testing.B) {
			r := benchStream(b, ps, ps-HeaderSize)
			b.SetBytes(int64(ps))
			b.ReportAllocs()
			for b.Loop() {
				if _, p, err := r.ReadMessage(); err != nil || len(p) != ps-HeaderSize {
					b.Fatal(len(p), err)
				}
			}
		})
	}
}

// BenchmarkReadMessage256KiB reassembles 256 KiB messages from full packets.
func BenchmarkReadMessage256KiB(b *testing.B) {
	for _, ps := range benchPacketSizes {
		b.Run(fmt.Sprintf("%dKiB", ps>>10), func(b *testing.B) {
			r := benchStream(b, ps, 256<<10)
			b.SetBytes(256 << 10)
			b.ReportAllocs()
			for b.Loop() {
				if _, p, err := r.ReadMessage(); err != nil || len(p) != 256<<10 {
					b.Fatal(len(p), err)
				}
			}
		})
	}
}
