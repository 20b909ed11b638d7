package bridge

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// FuzzReadAhead feeds an arbitrary byte stream, arriving in arbitrary
// pieces, through the read-ahead buffer in record mode and reads it back
// with arbitrary read sizes: the bytes must come out intact, a Read must
// never cross a record boundary the header bytes announced, and
// readyRecord must only approve a complete application-data record.
func FuzzReadAhead(f *testing.F) {
	f.Add(bytes.Join([][]byte{record(0x17, 30, 1), record(0x15, 2, 2), record(0x17, 0, 3)}, nil), []byte{3, 7, 200}, []byte{1, 5, 64})
	f.Add([]byte{0x17, 3, 3, 0xff, 0xff, 1, 2, 3}, []byte{1}, []byte{2})
	f.Add([]byte("not TLS at all, just bytes"), []byte{4, 4}, []byte{9})
	f.Fuzz(func(t *testing.T, stream, pieces, reads []byte) {
		var src chunks
		rest := stream
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(pieces) > 0 {
				n = min(n, int(pieces[i%len(pieces)])+1)
			}
			src = append(src, bytes.Clone(rest[:n]))
			rest = rest[n:]
		}
		var ra readAhead
		ra.init(poolFor(DefaultReadAheadSize), nil)
		var got []byte
		boundary := 0 // stream offset of the next record boundary, per the headers read so far
		for i := 0; len(got) < len(stream); i++ {
			size := 1 << 16
			if len(reads) > 0 {
				size = int(reads[i%len(reads)]) + 1
			}
			if ra.readyRecord(0) {
				end := len(got) + ra.recLeft
				if ra.recType != recordTypeApplicationData || ra.w-ra.r < ra.recLeft || end > len(stream) {
					t.Fatalf("readyRecord approved type %#x with %d of %d bytes buffered", ra.recType, ra.w-ra.r, ra.recLeft)
				}
			}
			p := make([]byte, size)
			n := ra.readRecord(p)
			if n == 0 {
				if err := ra.testFill(&src); err != nil {
					t.Fatalf("fill after %d of %d bytes: %v", len(got), len(stream), err)
				}
				continue
			}
			start := len(got)
			got = append(got, p[:n]...)
			for boundary <= start && boundary+recordHeaderLen <= len(stream) {
				boundary += recordHeaderLen + (int(stream[boundary+3])<<8 | int(stream[boundary+4]))
			}
			if start < boundary && len(got) > boundary {
				t.Fatalf("Read of [%d, %d) crosses the record boundary at %d", start, len(got), boundary)
			}
		}
		if !bytes.Equal(got, stream) {
			t.Fatal("bytes differ")
		}
	})
}

// piecesConn is a net.Conn whose Reads return the scripted pieces one per
// call (at most the caller's slice), then io.EOF.
type piecesConn struct {
	net.Conn
	src chunks
}

func (c *piecesConn) Read(p []byte) (int, error) { return c.src.Read(p) }

// FuzzCoalesce feeds an arbitrary stream, arriving in arbitrary pieces,
// through a Conn in passthrough mode after CoalesceRecords and reads it
// back with arbitrary read sizes, as crypto/tls would: the bytes must come
// out intact and in order, and a record that begins inside a Read after
// its first byte must be application data longer than the threshold (a
// batch never carries another record type, or an empty record, past its
// first record).
func FuzzCoalesce(f *testing.F) {
	f.Add(bytes.Join([][]byte{record(0x17, 30, 1), record(0x17, 40, 2), record(0x15, 2, 3), record(0x17, 50, 4)}, nil), []byte{200}, []byte{255})
	f.Add(bytes.Join([][]byte{record(0x17, 300, 1), record(0x17, 17, 2), record(0x17, 300, 3)}, nil), []byte{100, 3, 250}, []byte{255, 7})
	f.Add([]byte{0x17, 3, 3, 0xff, 0xff, 1, 2, 3}, []byte{1}, []byte{2})
	f.Fuzz(func(t *testing.T, stream, pieces, reads []byte) {
		const minLen = emptyTLS13
		c := &piecesConn{}
		rest := stream
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(pieces) > 0 {
				n = min(n, int(pieces[i%len(pieces)])+1)
			}
			c.src = append(c.src, bytes.Clone(rest[:n]))
			rest = rest[n:]
		}
		b := New(c, Options{Direct: true})
		if err := b.CoalesceRecords(tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS13}); err != nil {
			t.Fatal(err)
		}
		// starts holds the stream offset of every record header.
		var starts []int
		for off := 0; off < len(stream); {
			starts = append(starts, off)
			if off+recordHeaderLen > len(stream) {
				break
			}
			off += recordHeaderLen + (int(stream[off+3])<<8 | int(stream[off+4]))
		}
		var got []byte
		for i := 0; ; i++ {
			size := 1 << 16
			if len(reads) > 0 {
				size = int(reads[i%len(reads)])*128 + 1
			}
			p := make([]byte, size)
			n, err := b.Read(p)
			start := len(got)
			got = append(got, p[:n]...)
			for _, off := range starts {
				if off <= start || off >= len(got) {
					continue
				}
				if off+recordHeaderLen > len(got) || stream[off] != recordTypeApplicationData ||
					int(stream[off+3])<<8|int(stream[off+4]) <= minLen {
					t.Fatalf("Read of [%d, %d) carries the record at %d (% x) past its first record", start, len(got), off, stream[off:min(off+recordHeaderLen, len(stream))])
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read after %d bytes: %v", len(got), err)
			}
		}
		if !bytes.Equal(got, stream) {
			t.Fatalf("read %d bytes, want the %d-byte stream", len(got), len(stream))
		}
	})
}
