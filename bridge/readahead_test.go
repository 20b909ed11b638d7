package bridge

import (
	"bytes"
	"io"
	"slices"
	"testing"
)

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
			if err := ra.fill(src); err != nil {
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

// fill compacts the buffer so that a whole record fits behind the unread
// bytes, and never reads more than the free space.
func TestReadAheadCompacts(t *testing.T) {
	var ra readAhead
	ra.init(poolFor(DefaultReadAheadSize), nil)
	big := make([]byte, DefaultReadAheadSize-100)
	src := &chunks{big, pattern(500, 8)}
	if err := ra.fill(src); err != nil {
		t.Fatal(err)
	}
	ra.r = len(big) - 10 // all but 10 bytes handed out
	if err := ra.fill(src); err != nil {
		t.Fatal(err)
	}
	if ra.r != 0 || ra.w != 510 || !bytes.Equal(ra.buf[10:510], pattern(500, 8)) {
		t.Fatalf("after compaction r=%d w=%d", ra.r, ra.w)
	}
}

// walk hands out what readRecord and the coalescing rules would: the
// current or next record whatever its type, then approved records, the
// last one possibly in part, and stops in front of anything else.
func TestReadAheadWalk(t *testing.T) {
	r1, r2, empty, alert := record(0x17, 500, 1), record(0x17, 300, 2), record(0x17, 17, 3), record(0x15, 2, 4)
	join := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	tests := []struct {
		name      string
		before    []byte // walked first, handed out in full
		p         []byte
		wantN     int
		wantExtra int
	}{
		{name: "one record", p: r1, wantN: len(r1)},
		{name: "records", p: join(r1, r2, r1), wantN: 2*len(r1) + len(r2), wantExtra: 2},
		{name: "stops before an alert", p: join(r1, r2, alert, r1), wantN: len(r1) + len(r2), wantExtra: 1},
		{name: "an alert first, then records", p: join(alert, r1), wantN: len(alert) + len(r1), wantExtra: 1},
		{name: "stops before an empty record", p: join(r1, empty, r2), wantN: len(r1)},
		{name: "an empty record first", p: join(empty, r1), wantN: len(empty) + len(r1), wantExtra: 1},
		{name: "ends inside a record", p: join(r1, r2[:200]), wantN: len(r1) + 200, wantExtra: 1},
		{name: "ends inside a header", p: join(r1, r2[:3]), wantN: len(r1)},
		{name: "only part of a header", p: r1[:3], wantN: 3},
		{name: "rest of a header", before: r1[:3], p: join(r1[3:], r2), wantN: len(r1) - 3 + len(r2), wantExtra: 1},
		{name: "rest of a record, then an alert", before: r1[:100], p: join(r1[100:], alert), wantN: len(r1) - 100},
		{name: "rest of a record, then records", before: r1[:100], p: join(r1[100:], r2), wantN: len(r1) - 100 + len(r2), wantExtra: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ra readAhead
			ra.init(poolFor(DefaultReadAheadSize), nil)
			if n, _ := ra.walk(tt.before, 17); n != len(tt.before) {
				t.Fatalf("walk(before) = %d, want %d", n, len(tt.before))
			}
			n, extra := ra.walk(tt.p, 17)
			if n != tt.wantN || extra != tt.wantExtra {
				t.Fatalf("walk = %d, %d extra; want %d, %d extra", n, extra, tt.wantN, tt.wantExtra)
			}
			// The framing state stands after the bytes handed out: the
			// rest, buffered, is served as the next record.
			if rest := tt.p[n:]; len(rest) > 0 {
				ra.keep(rest)
				q := make([]byte, 1000)
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
