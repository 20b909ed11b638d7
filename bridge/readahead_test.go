package bridge

import (
	"bytes"
	"io"
	"slices"
	"testing"
)

// testFill makes one Read of src into the read-ahead, as Conn.fill does
// with the socket; nothing may be buffered.
func (ra *readAhead) testFill(src io.Reader) error {
	n, err := src.Read(ra.space())
	return ra.commit(n, err)
}

// chunks is an io.Reader that returns one scripted chunk per Read.
type chunks [][]byte

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	(*c)[0] = (*c)[0][n:]
	if len((*c)[0]) == 0 {
		*c = (*c)[1:]
	}
	return n, nil
}

// A header that arrives in pieces is handed out as it comes, and the
// record after it is still framed right.
func TestReadAheadSplitHeader(t *testing.T) {
	rec1, rec2 := record(0x17, 40, 1), record(0x15, 2, 2)
	src := &chunks{rec1[:2], rec1[2:4], rec1[4:30], append(bytes.Clone(rec1[30:]), rec2...)}
	var ra readAhead
	ra.init(poolFor(DefaultReadAheadSize), nil)
	var got []byte
	var sizes []int
	p := make([]byte, 1000)
	for len(got) < len(rec1) {
		n := ra.readRecord(p)
		if n == 0 {
			if err := ra.testFill(src); err != nil {
				t.Fatal(err)
			}
			continue
		}
		sizes = append(sizes, n)
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, rec1) || !slices.Equal(sizes, []int{2, 2, 26, 15}) {
		t.Fatalf("handed out %v (%d bytes), want pieces 2, 2, 26, 15 of the 45-byte record", sizes, len(got))
	}
	if ra.readyRecord(0) {
		t.Fatal("an alert record is ready for coalescing")
	}
	if n := ra.readRecord(p); n != len(rec2) || !bytes.Equal(p[:n], rec2) {
		t.Fatalf("second record: %d bytes", n)
	}
}

// readyRecord needs the whole record, type 0x17 and a length above the
// threshold.
func TestReadAheadReady(t *testing.T) {
	full := record(0x17, 100, 3)
	tests := []struct {
		name   string
		buf    []byte
		minLen int
		want   bool
	}{
		{"complete data", full, 24, true},
		{"one byte short", full[:len(full)-1], 24, false},
		{"header only", full[:5], 24, false},
		{"partial header", full[:3], 24, false},
		{"at the threshold", record(0x17, 24, 4), 24, false},
		{"one above the threshold", record(0x17, 25, 4), 24, true},
		{"handshake", record(0x16, 100, 5), 24, false},
		{"alert", record(0x15, 100, 6), 0, false},
		{"change cipher spec", record(0x14, 100, 7), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ra readAhead
			ra.init(poolFor(DefaultReadAheadSize), tt.buf)
			if got := ra.readyRecord(tt.minLen); got != tt.want {
				t.Fatalf("readyRecord = %v, want %v", got, tt.want)
			}
		})
	}
}

// hand, in coalescing mode, hands out the current or next record whatever
// its type, then approved records, the last one possibly in part, and
// stops in front of anything else; what it leaves is served next.
func TestReadAheadHand(t *testing.T) {
	r1, r2, empty, alert := record(0x17, 500, 1), record(0x17, 300, 2), record(0x17, 17, 3), record(0x15, 2, 4)
	join := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	tests := []struct {
		name   string
		before []byte // arrives and is handed out first, in full
		p      []byte // arrives next
		wantN  int
	}{
		{name: "one record", p: r1, wantN: len(r1)},
		{name: "records", p: join(r1, r2, r1), wantN: 2*len(r1) + len(r2)},
		{name: "stops before an alert", p: join(r1, r2, alert, r1), wantN: len(r1) + len(r2)},
		{name: "an alert first, then records", p: join(alert, r1), wantN: len(alert) + len(r1)},
		{name: "stops before an empty record", p: join(r1, empty, r2), wantN: len(r1)},
		{name: "an empty record first", p: join(empty, r1), wantN: len(empty) + len(r1)},
		{name: "ends inside a record", p: join(r1, r2[:200]), wantN: len(r1) + 200},
		{name: "ends inside a header", p: join(r1, r2[:3]), wantN: len(r1)},
		{name: "only part of a header", p: r1[:3], wantN: 3},
		{name: "rest of a header", before: r1[:3], p: join(r1[3:], r2), wantN: len(r1) - 3 + len(r2)},
		{name: "rest of a record, then an alert", before: r1[:100], p: join(r1[100:], alert), wantN: len(r1) - 100},
		{name: "rest of a record, then records", before: r1[:100], p: join(r1[100:], r2), wantN: len(r1) - 100 + len(r2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ra readAhead
			ra.init(poolFor(DefaultReadAheadSize), nil)
			ra.coalesce = 17
			q := make([]byte, 4096)
			if len(tt.before) > 0 {
				if err := ra.testFill(&chunks{bytes.Clone(tt.before)}); err != nil {
					t.Fatal(err)
				}
				if n := ra.hand(q); n != len(tt.before) {
					t.Fatalf("hand(before) = %d, want %d", n, len(tt.before))
				}
			}
			if err := ra.testFill(&chunks{bytes.Clone(tt.p)}); err != nil {
				t.Fatal(err)
			}
			if n := ra.hand(q[:len(tt.p)]); n != tt.wantN || !bytes.Equal(q[:n], tt.p[:n]) {
				t.Fatalf("hand = %d, want %d", n, tt.wantN)
			}
			// The framing state stands after the bytes handed out: the
			// rest is served as the next record.
			if rest := tt.p[tt.wantN:]; len(rest) > 0 {
				if m := ra.readRecord(q); m == 0 || !bytes.Equal(q[:m], rest[:m]) {
					t.Fatalf("rest served as %d bytes", m)
				}
				if len(rest) >= recordHeaderLen && ra.recType != rest[0] {
					t.Fatalf("rest framed as a record of type %#x, want %#x", ra.recType, rest[0])
				}
			}
		})
	}
}
