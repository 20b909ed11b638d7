package tds

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestWriteReadMessageRoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, 503, 504, 505, 4088, 4089, 10000, 100000} {
		var buf bytes.Buffer
		w := NewWriter(&buf, 512)
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		if err := w.WriteMessage(TypeSQLBatch, payload); err != nil {
			t.Fatal(err)
		}
		r := NewReader(&buf, ReaderConfig{MaxPacketSize: 512})
		typ, got, err := r.ReadMessage()
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if typ != TypeSQLBatch || !bytes.Equal(got, payload) {
			t.Fatalf("size %d: got type %v, %d bytes", size, typ, len(got))
		}
		if _, _, err := r.ReadMessage(); err != io.EOF {
			t.Fatalf("size %d: after message: %v, want io.EOF", size, err)
		}
	}
}

func TestReaderRejectsLargePacket(t *testing.T) {
	pkt := Header{Type: TypePrelogin, Status: StatusEOM, Length: 5000}.Append(nil)
	r := NewReader(bytes.NewReader(pkt), ReaderConfig{})
	_, _, err := r.ReadMessage()
	if !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("err = %v, want ErrPacketTooLarge", err)
	}
	var pe *PacketError
	if !errors.As(err, &pe) || pe.Header.Length != 5000 {
		t.Fatalf("err = %#v", err)
	}
	t.Log(err)
}
