package tds

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// recorder keeps a copy of every Write call's bytes, one entry per call.
type recorder struct {
	writes [][]byte
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func TestWriterPreloginVector(t *testing.T) {
	var rec recorder
	w := NewWriter(&rec, 0)
	if w.PacketSize() != DefaultPacketSize {
		t.Fatalf("PacketSize() = %d, want %d", w.PacketSize(), DefaultPacketSize)
	}
	if err := w.WriteMessage(TypePrelogin, preloginPayload); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) != 1 || !bytes.Equal(rec.writes[0], preloginPacket) {
		t.Fatalf("writes = % x, want one write of % x", rec.writes, preloginPacket)
	}
}

func TestWriterExactPackets(t *testing.T) {
	tests := []struct {
		name       string
		packetSize int
		spid       uint16
		typ        PacketType
		payload    []byte
		want       [][]byte // one entry per underlying Write
	}{
		{
			name: "empty message is one header-only packet", packetSize: 512,
			typ: TypeAttention,
			want: [][]byte{{
				0x06,       // Type: Attention
				0x01,       // Status: EOM
				0x00, 0x08, // Length: 8
				0x00, 0x00, // SPID: 0
				0x01, // PacketID: 1
				0x00, // Window
			}},
		},
		{
			name: "payload fills exactly one packet", packetSize: 12, spid: 0x0102,
			typ: TypeSQLBatch, payload: []byte{0xA1, 0xA2, 0xA3, 0xA4},
			want: [][]byte{{
				0x01,       // Type: SQLBatch
				0x01,       // Status: EOM
				0x00, 0x0C, // Length: 12
				0x01, 0x02, // SPID: 0x0102
				0x01,                   // PacketID: 1
				0x00,                   // Window
				0xA1, 0xA2, 0xA3, 0xA4, // data
			}},
		},
		{
			name: "one byte over spills into a second packet", packetSize: 12,
			typ: TypeRPC, payload: []byte{0xA1, 0xA2, 0xA3, 0xA4, 0xA5},
			want: [][]byte{
				{
					0x03,       // Type: RPC
					0x00,       // Status: none (more follows)
					0x00, 0x0C, // Length: 12
					0x00, 0x00, // SPID
					0x01,                   // PacketID: 1
					0x00,                   // Window
					0xA1, 0xA2, 0xA3, 0xA4, // data
				},
				{
					0x03,       // Type: RPC
					0x01,       // Status: EOM
					0x00, 0x09, // Length: 9
					0x00, 0x00, // SPID
					0x02, // PacketID: 2
					0x00, // Window
					0xA5, // data
				},
			},
		},
		{
			name: "two full packets, no trailing empty packet", packetSize: 10,
			typ: TypePrelogin, payload: []byte{1, 2, 3, 4},
			want: [][]byte{
				{0x12, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x01, 0x00, 1, 2}, // PRELOGIN, more, len 10, id 1
				{0x12, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x02, 0x00, 3, 4}, // PRELOGIN, EOM, len 10, id 2
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			w := NewWriter(&rec, tt.packetSize)
			w.SetSPID(tt.spid)
			if err := w.WriteMessage(tt.typ, tt.payload); err != nil {
				t.Fatal(err)
			}
			if len(rec.writes) != len(tt.want) {
				t.Fatalf("%d writes, want %d: % x", len(rec.writes), len(tt.want), rec.writes)
			}
			for i := range tt.want {
				if !bytes.Equal(rec.writes[i], tt.want[i]) {
					t.Errorf("write %d = % x, want % x", i, rec.writes[i], tt.want[i])
				}
			}
		})
	}
}

// TestWriterOneWritePerPacket checks, over many sizes, that every Write on
// the underlying writer is one whole, well-formed packet of at most the
// packet size, and that the packets carry the payload in order.
func TestWriterOneWritePerPacket(t *testing.T) {
	payload := make([]byte, 3*4096+17)
	for i := range payload {
		payload[i] = byte(i*31 + 7)
	}
	for _, ps := range []int{9, 10, 512, 1000, 4096, 16383, MaxPacketSize} {
		for _, n := range []int{0, 1, ps - HeaderSize - 1, ps - HeaderSize, ps - HeaderSize + 1, len(payload)} {
			if n < 0 || n > len(payload) {
				continue
			}
			var rec recorder
			w := NewWriter(&rec, ps)
			if err := w.WriteMessage(TypeTabularResult, payload[:n]); err != nil {
				t.Fatal(err)
			}
			wantPackets := max(1, (n+ps-HeaderSize-1)/(ps-HeaderSize))
			if len(rec.writes) != wantPackets {
				t.Fatalf("packet size %d, payload %d: %d writes, want %d", ps, n, len(rec.writes), wantPackets)
			}
			var joined []byte
			for i, p := range rec.writes {
				h, err := ParseHeader(p)
				if err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				last := i == len(rec.writes)-1
				if int(h.Length) != len(p) || len(p) > ps || h.Type != TypeTabularResult ||
					h.PacketID != uint8(i+1) || (h.Status == StatusEOM) != last || (!last && h.Status != 0) {
					t.Fatalf("packet size %d, payload %d: write %d is %v, %d bytes", ps, n, i, h, len(p))
				}
				if !last && len(p) != ps {
					t.Fatalf("packet size %d: non-final packet %d has %d bytes", ps, i, len(p))
				}
				joined = append(joined, p[HeaderSize:]...)
			}
			if !bytes.Equal(joined, payload[:n]) {
				t.Fatalf("packet size %d, payload %d: data differs", ps, n)
			}
		}
	}
}

// TestWriterPacketIDWraps writes a message of 600 packets: PacketID counts
// from 1 modulo 256 and restarts at 1 with the next message.
func TestWriterPacketIDWraps(t *testing.T) {
	var rec recorder
	w := NewWriter(&rec, HeaderSize+1) // one payload byte per packet
	const packets = 600
	if err := w.WriteMessage(TypeBulkLoad, make([]byte, packets)); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) != packets {
		t.Fatalf("%d writes, want %d", len(rec.writes), packets)
	}
	for i, p := range rec.writes {
		if want := uint8((i + 1) % 256); p[6] != want {
			t.Fatalf("packet %d has PacketID %d, want %d", i, p[6], want)
		}
	}
	if rec.writes[254][6] != 255 || rec.writes[255][6] != 0 || rec.writes[256][6] != 1 {
		t.Fatalf("wrap: ids %d %d %d", rec.writes[254][6], rec.writes[255][6], rec.writes[256][6])
	}
	rec.writes = nil
	if err := w.WriteMessage(TypeBulkLoad, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if rec.writes[0][6] != 1 {
		t.Fatalf("next message starts at PacketID %d, want 1", rec.writes[0][6])
	}
}

func TestWriterStreaming(t *testing.T) {
	var rec recorder
	w := NewWriter(&rec, 12) // 4 payload bytes per packet
	w.SetSPID(7)
	w.BeginMessage(TypeSQLBatch, StatusResetConnection|StatusIgnore|StatusEOM)
	for _, chunk := range [][]byte{{1}, {2, 3}, {}, {4, 5, 6, 7, 8}, {9}} {
		n, err := w.Write(chunk)
		if err != nil || n != len(chunk) {
			t.Fatalf("Write(% x) = %d, %v", chunk, n, err)
		}
	}
	if len(rec.writes) != 2 {
		t.Fatalf("%d packets before EndMessage, want 2 (only full packets with more data after them)", len(rec.writes))
	}
	if err := w.EndMessage(); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{
		{0x01, 0x08, 0x00, 0x0C, 0x00, 0x07, 0x01, 0x00, 1, 2, 3, 4}, // SQLBatch, RESETCONNECTION (first packet only), len 12, SPID 7, id 1
		{0x01, 0x00, 0x00, 0x0C, 0x00, 0x07, 0x02, 0x00, 5, 6, 7, 8}, // SQLBatch, no status, len 12, id 2
		{0x01, 0x03, 0x00, 0x09, 0x00, 0x07, 0x03, 0x00, 9},          // SQLBatch, EOM|IGNORE, len 9, id 3
	}
	if len(rec.writes) != len(want) {
		t.Fatalf("writes = % x, want % x", rec.writes, want)
	}
	for i := range want {
		if !bytes.Equal(rec.writes[i], want[i]) {
			t.Errorf("write %d = % x, want % x", i, rec.writes[i], want[i])
		}
	}

	// A streamed empty message is one header-only packet with EOM.
	rec.writes = nil
	w.BeginMessage(TypeTransactionManager, 0)
	if err := w.EndMessage(); err != nil {
		t.Fatal(err)
	}
	if wantEmpty := []byte{0x0E, 0x01, 0x00, 0x08, 0x00, 0x07, 0x01, 0x00}; len(rec.writes) != 1 || !bytes.Equal(rec.writes[0], wantEmpty) {
		t.Fatalf("empty message writes = % x, want % x", rec.writes, wantEmpty)
	}
}

func TestWriterMisuse(t *testing.T) {
	var rec recorder
	w := NewWriter(&rec, 512)
	if _, err := w.Write([]byte{1}); !errors.Is(err, ErrNoMessage) {
		t.Errorf("Write without BeginMessage: %v, want ErrNoMessage", err)
	}
	if err := w.EndMessage(); !errors.Is(err, ErrNoMessage) {
		t.Errorf("EndMessage without BeginMessage: %v, want ErrNoMessage", err)
	}
	w.BeginMessage(TypeSQLBatch, 0)
	if err := w.WriteMessage(TypeRPC, []byte{1}); !errors.Is(err, ErrMessageOpen) {
		t.Errorf("WriteMessage in an open message: %v, want ErrMessageOpen", err)
	}
	if err := w.SetPacketSize(1024); !errors.Is(err, ErrMessageOpen) {
		t.Errorf("SetPacketSize in an open message: %v, want ErrMessageOpen", err)
	}
	// The open message is still intact after those refusals.
	if _, err := w.Write([]byte{0xAB}); err != nil {
		t.Fatal(err)
	}
	if err := w.EndMessage(); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) != 1 || !bytes.Equal(rec.writes[0], []byte{0x01, 0x01, 0x00, 0x09, 0x00, 0x00, 0x01, 0x00, 0xAB}) {
		t.Fatalf("writes = % x", rec.writes)
	}
	// BeginMessage inside an open message breaks the Writer for good.
	w.BeginMessage(TypeSQLBatch, 0)
	w.BeginMessage(TypeRPC, 0)
	if _, err := w.Write([]byte{1}); !errors.Is(err, ErrMessageOpen) {
		t.Errorf("Write after a nested BeginMessage: %v, want ErrMessageOpen", err)
	}
	if err := w.WriteMessage(TypeRPC, nil); !errors.Is(err, ErrMessageOpen) {
		t.Errorf("WriteMessage after a nested BeginMessage: %v, want ErrMessageOpen (sticky)", err)
	}
}

func TestWriterPacketSize(t *testing.T) {
	tests := []struct{ in, want int }{
		{0, DefaultPacketSize}, {-1, DefaultPacketSize}, {1, HeaderSize + 1}, {HeaderSize, HeaderSize + 1},
		{HeaderSize + 1, HeaderSize + 1}, {MinPacketSize, MinPacketSize}, {MaxPacketSize, MaxPacketSize},
		{MaxPacketSize + 1, MaxPacketSize}, {1 << 20, MaxPacketSize},
	}
	for _, tt := range tests {
		if got := NewWriter(io.Discard, tt.in).PacketSize(); got != tt.want {
			t.Errorf("NewWriter(%d).PacketSize() = %d, want %d", tt.in, got, tt.want)
		}
	}
	var rec recorder
	w := NewWriter(&rec, 512)
	for _, bad := range []int{-1, 0, HeaderSize, MaxPacketSize + 1} {
		if err := w.SetPacketSize(bad); !errors.Is(err, ErrInvalidPacketSize) {
			t.Errorf("SetPacketSize(%d) = %v, want ErrInvalidPacketSize", bad, err)
		}
	}
	if w.PacketSize() != 512 {
		t.Fatalf("PacketSize() = %d after refused changes", w.PacketSize())
	}
	payload := make([]byte, 40000)
	for _, ps := range []int{MaxEncryptedPacketSize, 600, MaxPacketSize} {
		if err := w.SetPacketSize(ps); err != nil {
			t.Fatal(err)
		}
		rec.writes = nil
		if err := w.WriteMessage(TypeTabularResult, payload); err != nil {
			t.Fatal(err)
		}
		if len(rec.writes[0]) != ps {
			t.Errorf("after SetPacketSize(%d): first packet has %d bytes", ps, len(rec.writes[0]))
		}
	}
}

// failWriter fails the write with index failAt (from 0), or writes short
// when short is set.
type failWriter struct {
	writes int
	failAt int
	short  bool
}

var errBroken = errors.New("broken pipe (test)")

func (f *failWriter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes-1 == f.failAt {
		if f.short {
			return len(p) - 1, nil
		}
		return 3, errBroken
	}
	return len(p), nil
}

func TestWriterErrorsAreSticky(t *testing.T) {
	f := &failWriter{failAt: 1}
	w := NewWriter(f, 12)
	err := w.WriteMessage(TypeSQLBatch, make([]byte, 10))
	if !errors.Is(err, errBroken) {
		t.Fatalf("WriteMessage = %v, want errBroken", err)
	}
	writes := f.writes
	if err2 := w.WriteMessage(TypeSQLBatch, []byte{1}); !errors.Is(err2, errBroken) {
		t.Errorf("second WriteMessage = %v, want the sticky error", err2)
	}
	w.BeginMessage(TypeSQLBatch, 0)
	if _, err2 := w.Write([]byte{1}); !errors.Is(err2, errBroken) {
		t.Errorf("Write = %v, want the sticky error", err2)
	}
	if err2 := w.EndMessage(); !errors.Is(err2, errBroken) {
		t.Errorf("EndMessage = %v, want the sticky error", err2)
	}
	if f.writes != writes {
		t.Errorf("%d more writes after the failure", f.writes-writes)
	}

	short := NewWriter(&failWriter{failAt: 0, short: true}, 512)
	if err := short.WriteMessage(TypeSQLBatch, []byte{1, 2}); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short write: %v, want io.ErrShortWrite", err)
	}

	// Write reports the bytes it took before the failing packet.
	f = &failWriter{failAt: 1}
	w = NewWriter(f, 12)
	w.BeginMessage(TypeSQLBatch, 0)
	n, err := w.Write(make([]byte, 13)) // packets of 4: the second flush fails
	if !errors.Is(err, errBroken) || n != 8 {
		t.Errorf("Write = %d, %v; want 8, errBroken", n, err)
	}
}

// TestWriterClear: the Writer's buffer keeps the bytes of the packets it wrote (the last one,
// and where the last was shorter, the tail of the one before); Clear zeroes all of it.
func TestWriterClear(t *testing.T) {
	w := NewWriter(io.Discard, 512)
	secret := bytes.Repeat([]byte{0xA5}, 700) // one full packet, then a shorter one
	if err := w.WriteMessage(TypeLogin7, secret); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(w.buf, []byte{0xA5, 0xA5, 0xA5, 0xA5}) {
		t.Fatal("the buffer holds nothing of the message: the test shows nothing")
	}
	w.Clear()
	if !bytes.Equal(w.buf, make([]byte, len(w.buf))) {
		t.Fatal("bytes of the message are left in the buffer after Clear")
	}
}
