package tds

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// pkt returns a well-formed packet of type typ with status st and body.
func pkt(typ PacketType, st Status, id uint8, body ...byte) []byte {
	b := Header{Type: typ, Status: st, Length: uint16(HeaderSize + len(body)), PacketID: id}.Append(nil)
	return append(b, body...)
}

// hdr returns a bare header with the given length field.
func hdr(typ PacketType, st Status, length uint16) []byte {
	return Header{Type: typ, Status: st, Length: length, PacketID: 1}.Append(nil)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var allSentinels = []error{
	ErrShortLength, ErrPacketTooLarge, ErrTypeChanged, ErrUnexpectedType,
	ErrTruncatedHeader, ErrTruncatedPacket, ErrMessageTooLarge,
}

func TestReaderPreloginVector(t *testing.T) {
	r := NewReader(bytes.NewReader(preloginPacket), ReaderConfig{Allowed: Types(TypePrelogin)})
	typ, payload, err := r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if typ != TypePrelogin || !bytes.Equal(payload, preloginPayload) {
		t.Fatalf("ReadMessage = %v, % x", typ, payload)
	}
	if r.MessageStatus() != StatusEOM {
		t.Errorf("MessageStatus = %v, want EOM", r.MessageStatus())
	}

	r = NewReader(bytes.NewReader(preloginPacket), ReaderConfig{})
	h, body, err := r.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Type: TypePrelogin, Status: StatusEOM, Length: 47, PacketID: 1}
	if h != want || !bytes.Equal(body, preloginPayload) {
		t.Fatalf("ReadPacket = %+v, % x", h, body)
	}
	if _, _, err := r.ReadPacket(); err != io.EOF {
		t.Fatalf("ReadPacket at the end = %v, want io.EOF", err)
	}
}

func TestReaderMessages(t *testing.T) {
	stream := cat(
		pkt(TypeTabularResult, 0, 1, 'a', 'b'),
		pkt(TypeTabularResult, 0, 2),
		pkt(TypeTabularResult, StatusEOM, 3, 'c'),
		pkt(TypeAttention, StatusEOM, 1),
		pkt(TypeSQLBatch, StatusResetConnection, 1, 'x'),
		pkt(TypeSQLBatch, StatusEOM|StatusIgnore, 2, 'y'),
	)
	r := NewReader(bytes.NewReader(stream), ReaderConfig{})
	want := []struct {
		typ     PacketType
		payload string
		status  Status
	}{
		{TypeTabularResult, "abc", StatusEOM},
		{TypeAttention, "", StatusEOM},
		{TypeSQLBatch, "xy", StatusEOM | StatusIgnore | StatusResetConnection},
	}
	for i, w := range want {
		typ, payload, err := r.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if typ != w.typ || string(payload) != w.payload || r.MessageStatus() != w.status {
			t.Errorf("message %d = %v %q %v, want %v %q %v", i, typ, payload, r.MessageStatus(), w.typ, w.payload, w.status)
		}
	}
	if _, _, err := r.ReadMessage(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	if _, _, err := r.ReadMessage(); err != io.EOF {
		t.Fatalf("again at the end: %v, want io.EOF", err)
	}
}

func TestReaderPacketThenMessage(t *testing.T) {
	stream := cat(
		pkt(TypePrelogin, 0, 1, 1, 2),
		pkt(TypePrelogin, 0, 2, 3),
		pkt(TypePrelogin, StatusEOM, 3, 4),
	)
	r := NewReader(bytes.NewReader(stream), ReaderConfig{})
	h, body, err := r.ReadPacket()
	if err != nil || h.Status != 0 || !bytes.Equal(body, []byte{1, 2}) {
		t.Fatalf("ReadPacket = %v, % x, %v", h, body, err)
	}
	// ReadMessage returns the rest of the unfinished message.
	typ, payload, err := r.ReadMessage()
	if err != nil || typ != TypePrelogin || !bytes.Equal(payload, []byte{3, 4}) {
		t.Fatalf("ReadMessage = %v, % x, %v", typ, payload, err)
	}
}

func TestReaderAppendPacket(t *testing.T) {
	stream := cat(pkt(TypeSSPI, 0, 1, 'b'), pkt(TypeSSPI, StatusEOM, 2, 'c', 'd'), pkt(TypeSQLBatch, StatusEOM, 1, 'e'))
	r := NewReader(bytes.NewReader(stream), ReaderConfig{Allowed: Types(TypeSSPI)})
	out := []byte("a")
	for _, want := range []string{"ab", "abcd"} {
		var err error
		_, out, err = r.AppendPacket(out)
		if err != nil || string(out) != want {
			t.Fatalf("AppendPacket = %q, %v; want %q", out, err, want)
		}
	}
	if r.MessageStatus() != StatusEOM {
		t.Errorf("MessageStatus = %v, want EOM", r.MessageStatus())
	}
	_, out, err := r.AppendPacket(out)
	if !errors.Is(err, ErrUnexpectedType) || string(out) != "abcd" {
		t.Fatalf("AppendPacket of a refused type = %q, %v", out, err)
	}
}

func TestReaderAppendMessage(t *testing.T) {
	stream := cat(pkt(TypeRPC, 0, 1, 'b'), pkt(TypeRPC, StatusEOM, 2, 'c'), hdr(TypeRPC, StatusEOM, 3))
	r := NewReader(bytes.NewReader(stream), ReaderConfig{})
	dst := []byte("a")
	typ, out, err := r.AppendMessage(dst)
	if err != nil || typ != TypeRPC || string(out) != "abc" {
		t.Fatalf("AppendMessage = %v, %q, %v", typ, out, err)
	}
	_, out, err = r.AppendMessage(out)
	if !errors.Is(err, ErrShortLength) || string(out) != "abc" {
		t.Fatalf("AppendMessage on a bad packet = %q, %v; want the input back and ErrShortLength", out, err)
	}
}

// TestReaderBadInput feeds every kind of bad input to ReadMessage and to a
// loop of ReadPacket: each yields its own sentinel, located at the packet.
func TestReaderBadInput(t *testing.T) {
	tlsRecord := []byte{0x16, 0x03, 0x01, 0x00, 0xF5, 0x01, 0x00, 0x00, 0xF1} // a ClientHello record's first bytes
	tests := []struct {
		name    string
		cfg     ReaderConfig
		in      []byte
		wantErr error
		packet  int   // PacketError.Packet
		msgOff  int   // PacketError.MessageOffset
		off     int64 // PacketError.StreamOffset
	}{
		{name: "length 0", in: hdr(TypeSQLBatch, StatusEOM, 0), wantErr: ErrShortLength},
		{name: "length 7", in: cat(hdr(TypeSQLBatch, StatusEOM, 7), []byte{0}), wantErr: ErrShortLength},
		{name: "length 7 in a later packet", in: cat(pkt(TypeSQLBatch, 0, 1, 1, 2, 3), hdr(TypeSQLBatch, StatusEOM, 7)),
			wantErr: ErrShortLength, packet: 1, msgOff: 3, off: 11},
		{name: "length 4097 before negotiation", in: hdr(TypePrelogin, StatusEOM, 4097), wantErr: ErrPacketTooLarge},
		{name: "length above a negotiated 512", cfg: ReaderConfig{MaxPacketSize: 512},
			in:      cat(pkt(TypeTabularResult, StatusEOM, 1, make([]byte, 504)...), hdr(TypeTabularResult, StatusEOM, 513)),
			wantErr: ErrPacketTooLarge, off: 512},
		{name: "length 65535 at the largest limit", cfg: ReaderConfig{MaxPacketSize: 1 << 20},
			in: hdr(TypeTabularResult, StatusEOM, 0xFFFF), wantErr: ErrPacketTooLarge},
		{name: "length 32768", cfg: ReaderConfig{MaxPacketSize: MaxPacketSize},
			in: hdr(TypeTabularResult, StatusEOM, MaxPacketSize+1), wantErr: ErrPacketTooLarge},
		{name: "type changes mid-message", in: cat(pkt(TypeSQLBatch, 0, 1, 'a', 'b'), pkt(TypeRPC, StatusEOM, 2, 'c')),
			wantErr: ErrTypeChanged, packet: 1, msgOff: 2, off: 10},
		{name: "type not allowed", cfg: ReaderConfig{Allowed: Types(TypePrelogin, TypeTabularResult)},
			in: cat(pkt(TypeLogin7, StatusEOM, 1, 1)), wantErr: ErrUnexpectedType},
		{name: "TLS record where a packet belongs", cfg: ReaderConfig{Allowed: Types(TypePrelogin, TypeTabularResult)},
			in: tlsRecord, wantErr: ErrUnexpectedType},
		{name: "type not allowed after a good message", cfg: ReaderConfig{Allowed: Types(TypePrelogin)},
			in: cat(pkt(TypePrelogin, StatusEOM, 1, 9), pkt(TypeTabularResult, StatusEOM, 1, 9)), wantErr: ErrUnexpectedType, off: 9},
		{name: "type above 31 with an allowed set", cfg: ReaderConfig{Allowed: Types(TypePrelogin)},
			in: cat(hdr(0xFF, StatusEOM, 8)), wantErr: ErrUnexpectedType},
		{name: "EOF after 1 header byte", in: []byte{0x12}, wantErr: ErrTruncatedHeader},
		{name: "EOF after 7 header bytes", in: preloginPacket[:7], wantErr: ErrTruncatedHeader},
		{name: "EOF inside the second header", in: cat(pkt(TypeSQLBatch, 0, 1, 1), []byte{0x01, 0x01}),
			wantErr: ErrTruncatedHeader, packet: 1, msgOff: 1, off: 9},
		{name: "EOF between packets of a message", in: pkt(TypeSQLBatch, 0, 1, 1, 2),
			wantErr: ErrTruncatedHeader, packet: 1, msgOff: 2, off: 10},
		{name: "EOF right after a header", in: hdr(TypePrelogin, StatusEOM, 47), wantErr: ErrTruncatedPacket},
		{name: "EOF inside a body", in: preloginPacket[:46], wantErr: ErrTruncatedPacket},
		{name: "EOF inside the second body", in: cat(pkt(TypeSQLBatch, 0, 1, 1), hdr(TypeSQLBatch, StatusEOM, 20), []byte{1, 2}),
			wantErr: ErrTruncatedPacket, packet: 1, msgOff: 1, off: 9},
		{name: "one packet over the message limit", cfg: ReaderConfig{MaxMessageSize: 100},
			in: pkt(TypeTabularResult, StatusEOM, 1, make([]byte, 101)...), wantErr: ErrMessageTooLarge},
		{name: "third packet over the message limit", cfg: ReaderConfig{MaxMessageSize: 10},
			in:      cat(pkt(TypeTabularResult, 0, 1, 1, 2, 3, 4), pkt(TypeTabularResult, 0, 2, 5, 6, 7, 8), hdr(TypeTabularResult, StatusEOM, 11)),
			wantErr: ErrMessageTooLarge, packet: 2, msgOff: 8, off: 24},
	}
	for _, tt := range tests {
		for _, api := range []string{"ReadMessage", "ReadPacket"} {
			t.Run(tt.name+"/"+api, func(t *testing.T) {
				r := NewReader(bytes.NewReader(tt.in), tt.cfg)
				var err error
				for err == nil {
					if api == "ReadMessage" {
						_, _, err = r.ReadMessage()
					} else {
						_, _, err = r.ReadPacket()
					}
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				for _, other := range allSentinels {
					if other != tt.wantErr && errors.Is(err, other) {
						t.Errorf("err %v also matches %v", err, other)
					}
				}
				truncated := tt.wantErr == ErrTruncatedHeader || tt.wantErr == ErrTruncatedPacket
				if errors.Is(err, io.ErrUnexpectedEOF) != truncated {
					t.Errorf("errors.Is(err, io.ErrUnexpectedEOF) = %v, want %v", !truncated, truncated)
				}
				var pe *PacketError
				if !errors.As(err, &pe) {
					t.Fatalf("err %T is not a *PacketError", err)
				}
				if !pe.Located || pe.Packet != tt.packet || pe.MessageOffset != tt.msgOff || pe.StreamOffset != tt.off {
					t.Errorf("located at packet %d, message offset %d, stream offset %d; want %d, %d, %d",
						pe.Packet, pe.MessageOffset, pe.StreamOffset, tt.packet, tt.msgOff, tt.off)
				}
				if got := err.Error(); !bytes.HasPrefix([]byte(got), []byte("tds: ")) {
					t.Errorf("message %q lacks the package prefix", got)
				}
				// Sticky: the next call fails the same way without reading.
				_, _, err2 := r.ReadMessage()
				if err2 != err {
					t.Errorf("next call = %v, want the same error", err2)
				}
			})
		}
	}
}

func TestPacketErrorText(t *testing.T) {
	r := NewReader(bytes.NewReader(cat(pkt(TypePrelogin, StatusEOM, 1, 1), hdr(TypePrelogin, StatusEOM, 5000))), ReaderConfig{})
	if _, _, err := r.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.ReadMessage()
	want := "tds: packet larger than the maximum packet size: length 5000 > 4096 " +
		"(packet 0 of the message, message offset 0, stream offset 9, header bytes [12 01 13 88 00 00 01 00])"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	r = NewReader(bytes.NewReader([]byte{0x12, 0x01, 0x00}), ReaderConfig{})
	_, _, err = r.ReadMessage()
	want = "tds: truncated packet header: unexpected EOF: stream ended after 3 of 8 header bytes " +
		"(packet 0 of the message, message offset 0, stream offset 0, header bytes [12 01 00])"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	_, err = ParseHeader([]byte{0x12, 0x01, 0x00, 0x07, 0, 0, 0, 0})
	if want := "tds: packet length below the header size: length 7 < 8"; err == nil || err.Error() != want {
		t.Fatalf("ParseHeader err = %v, want %s", err, want)
	}
}

// exactReader serves data in chunks of at most 3 bytes and fails any Read
// that asks for bytes beyond limit.
type exactReader struct {
	data  []byte
	pos   int
	limit int
}

var errReadPast = errors.New("read past the end of the message")

func (e *exactReader) Read(p []byte) (int, error) {
	if e.pos+len(p) > e.limit {
		return 0, fmt.Errorf("%w: Read of %d bytes at offset %d, limit %d", errReadPast, len(p), e.pos, e.limit)
	}
	if e.pos == len(e.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 3)], e.data[e.pos:])
	e.pos += n
	return n, nil
}

// TestReaderNeverReadsPastMessage checks that the Reader asks the
// underlying reader for no byte beyond the message it returns: the bridge
// relies on this to hand what follows (TLS records) to someone else.
func TestReaderNeverReadsPastMessage(t *testing.T) {
	m1 := cat(pkt(TypePrelogin, 0, 1, 1, 2, 3, 4, 5), pkt(TypePrelogin, StatusEOM, 2, 6, 7))
	m2 := pkt(TypeTabularResult, StatusEOM, 1, 8)
	m3 := pkt(TypePrelogin, StatusEOM, 1)
	trailer := []byte{0x17, 0x03, 0x03, 0x00, 0x20} // a TLS application record header
	data := cat(m1, m2, m3, trailer)
	er := &exactReader{data: data}
	r := NewReader(er, ReaderConfig{})

	er.limit = len(m1)
	if typ, p, err := r.ReadMessage(); err != nil || typ != TypePrelogin || !bytes.Equal(p, []byte{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("message 1 = %v % x %v", typ, p, err)
	}
	er.limit += len(m2)
	if _, p, err := r.ReadMessage(); err != nil || !bytes.Equal(p, []byte{8}) {
		t.Fatalf("message 2 = % x %v", p, err)
	}
	er.limit += len(m3)
	if h, p, err := r.ReadPacket(); err != nil || h.Length != HeaderSize || len(p) != 0 {
		t.Fatalf("packet 3 = %v % x %v", h, p, err)
	}
	if er.pos != len(m1)+len(m2)+len(m3) {
		t.Fatalf("consumed %d bytes, want %d", er.pos, len(m1)+len(m2)+len(m3))
	}
	er.limit = len(data)
	rest := make([]byte, len(trailer))
	_, err := io.ReadFull(er, rest)
	if err != nil || !bytes.Equal(rest, trailer) {
		t.Fatalf("bytes after the messages = % x, %v; want % x", rest, err, trailer)
	}
}

// flakyReader returns err on call number failAt (from 0) without data;
// otherwise it reads from r.
type flakyReader struct {
	r      io.Reader
	calls  int
	failAt int
	err    error
}

func (f *flakyReader) Read(p []byte) (int, error) {
	f.calls++
	if f.calls-1 == f.failAt {
		return 0, f.err
	}
	return f.r.Read(p)
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (test)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestReaderRetryAtMessageBoundary(t *testing.T) {
	stream := cat(pkt(TypeSQLBatch, StatusEOM, 1, 'a'), pkt(TypeSQLBatch, 0, 1, 'b'), pkt(TypeSQLBatch, StatusEOM, 2, 'c'))
	// Fail the first read of the second message's header: nothing is
	// consumed, so the error is not sticky.
	f := &flakyReader{r: bytes.NewReader(stream), failAt: 2, err: timeoutError{}}
	r := NewReader(f, ReaderConfig{})
	if _, p, err := r.ReadMessage(); err != nil || string(p) != "a" {
		t.Fatalf("message 1 = %q, %v", p, err)
	}
	_, _, err := r.ReadMessage()
	var te timeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want the timeout", err)
	}
	for _, s := range allSentinels {
		if errors.Is(err, s) {
			t.Errorf("a read error matches %v", s)
		}
	}
	if _, p, err := r.ReadMessage(); err != nil || string(p) != "bc" {
		t.Fatalf("retry = %q, %v; want \"bc\"", p, err)
	}

	// Inside a message every error is sticky.
	f = &flakyReader{r: bytes.NewReader(stream), failAt: 4, err: timeoutError{}}
	r = NewReader(f, ReaderConfig{})
	if _, _, err := r.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.ReadMessage()
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want the timeout", err)
	}
	if _, _, err2 := r.ReadMessage(); err2 != err {
		t.Fatalf("after a mid-message failure: %v, want the sticky %v", err2, err)
	}
}

func TestReaderLimits(t *testing.T) {
	tests := []struct{ in, want int }{
		{0, DefaultPacketSize}, {-5, DefaultPacketSize}, {1, HeaderSize}, {512, 512},
		{MaxPacketSize, MaxPacketSize}, {MaxPacketSize + 1, MaxPacketSize},
	}
	for _, tt := range tests {
		if got := NewReader(nil, ReaderConfig{MaxPacketSize: tt.in}).MaxPacketSize(); got != tt.want {
			t.Errorf("MaxPacketSize %d -> %d, want %d", tt.in, got, tt.want)
		}
	}
	// Raising the limit after negotiation accepts larger packets.
	big := pkt(TypeTabularResult, StatusEOM, 1, make([]byte, 8000)...)
	r := NewReader(bytes.NewReader(cat(big, big)), ReaderConfig{Allowed: Types(TypePrelogin)})
	r.SetAllowed(0)
	r.SetMaxPacketSize(8008)
	if _, p, err := r.ReadMessage(); err != nil || len(p) != 8000 {
		t.Fatalf("after SetMaxPacketSize(8008): %d bytes, %v", len(p), err)
	}
	r.SetMaxMessageSize(7999)
	if _, _, err := r.ReadMessage(); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("after SetMaxMessageSize(7999): %v, want ErrMessageTooLarge", err)
	}
	// Growth stops at MaxMessageSize, whatever the doubling would give.
	var wire bytes.Buffer
	if err := NewWriter(&wire, 512).WriteMessage(TypeTabularResult, make([]byte, 10000)); err != nil {
		t.Fatal(err)
	}
	r = NewReader(&wire, ReaderConfig{MaxPacketSize: 512, MaxMessageSize: 10000})
	if _, p, err := r.ReadMessage(); err != nil || len(p) != 10000 || cap(p) > 10000 {
		t.Fatalf("message of 10000 bytes: len %d, cap %d, %v; want a capacity of at most 10000", len(p), cap(p), err)
	}
	// A message of exactly MaxMessageSize is accepted.
	exact := cat(pkt(TypeSQLBatch, 0, 1, 1, 2, 3), pkt(TypeSQLBatch, StatusEOM, 2, 4, 5))
	r = NewReader(bytes.NewReader(exact), ReaderConfig{MaxMessageSize: 5})
	if _, p, err := r.ReadMessage(); err != nil || len(p) != 5 {
		t.Fatalf("message of exactly the limit: %d bytes, %v", len(p), err)
	}
}

// TestReaderNoAllocationBeforeValidation sends headers that claim large
// lengths the limits refuse: the Reader must refuse them without
// allocating anything near the claimed size.
func TestReaderNoAllocationBeforeValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  ReaderConfig
		in   []byte
		want error
	}{
		{"length 65535 over the packet limit", ReaderConfig{}, hdr(TypeTabularResult, StatusEOM, 0xFFFF), ErrPacketTooLarge},
		{"length 32767 over the message limit", ReaderConfig{MaxPacketSize: MaxPacketSize, MaxMessageSize: 1000},
			hdr(TypeTabularResult, StatusEOM, MaxPacketSize), ErrMessageTooLarge},
		{"type refused before its length", ReaderConfig{MaxPacketSize: MaxPacketSize, Allowed: Types(TypePrelogin)},
			hdr(TypeTabularResult, StatusEOM, MaxPacketSize), ErrUnexpectedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const runs = 50
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				r := NewReader(bytes.NewReader(tt.in), tt.cfg)
				if _, _, err := r.ReadMessage(); !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
			}
			runtime.ReadMemStats(&after)
			if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 4096 {
				t.Fatalf("%d bytes allocated per refused header; the claimed length was %d", perRun, MaxPacketSize)
			}
		})
	}
}

// loopReader serves data over and over without allocating.
type loopReader struct {
	data []byte
	pos  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.pos:])
	l.pos = (l.pos + n) % len(l.data)
	return n, nil
}

func TestSteadyStateAllocations(t *testing.T) {
	payload := make([]byte, 40000)
	var stream bytes.Buffer
	if err := NewWriter(&stream, 4096).WriteMessage(TypeTabularResult, payload); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&loopReader{data: stream.Bytes()}, ReaderConfig{})
	read := func() {
		if _, p, err := r.ReadMessage(); err != nil || len(p) != len(payload) {
			t.Fatalf("ReadMessage = %d bytes, %v", len(p), err)
		}
	}
	read() // grows the buffer once
	if n := testing.AllocsPerRun(20, read); n != 0 {
		t.Errorf("ReadMessage: %v allocs per run in steady state, want 0", n)
	}
	w := NewWriter(io.Discard, 4096)
	write := func() {
		if err := w.WriteMessage(TypeTabularResult, payload); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(20, write); n != 0 {
		t.Errorf("WriteMessage: %v allocs per run, want 0", n)
	}
}
