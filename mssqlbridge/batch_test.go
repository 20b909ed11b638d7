package mssqlbridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// batchSink records every Write it gets, copied; fail makes the next Write fail.
type batchSink struct {
	writes [][]byte
	fail   error
}

func (r *batchSink) Write(p []byte) (int, error) {
	if err := r.fail; err != nil {
		r.fail = nil
		return 0, err
	}
	r.writes = append(r.writes, slices.Clone(p))
	return len(p), nil
}

func (r *batchSink) sizes() []int {
	var s []int
	for _, w := range r.writes {
		s = append(s, len(w))
	}
	return s
}

// tdsPacket returns a TDS packet of size bytes (header included) of type t, ending its
// message when eom is set; its body is filled with fill.
func tdsPacket(t tds.PacketType, size int, eom bool, fill byte) []byte {
	h := tds.Header{Type: t, Length: uint16(size), PacketID: 1}
	if eom {
		h.Status = tds.StatusEOM
	}
	return append(h.Append(nil), bytes.Repeat([]byte{fill}, size-tds.HeaderSize)...)
}

func TestContinues(t *testing.T) {
	rpc := tdsPacket(tds.TypeRPC, 100, false, 1)
	tests := []struct {
		name string
		p    []byte
		want bool
	}{
		{"RPC without EOM", rpc, true},
		{"SQL batch without EOM", tdsPacket(tds.TypeSQLBatch, 4096, false, 1), true},
		{"bulk load without EOM", tdsPacket(tds.TypeBulkLoad, 4096, false, 1), true},
		{"transaction manager without EOM", tdsPacket(tds.TypeTransactionManager, 50, false, 1), true},
		{"LOGIN7 without EOM", tdsPacket(tds.TypeLogin7, 512, false, 1), true},
		{"RPC with EOM", tdsPacket(tds.TypeRPC, 100, true, 1), false},
		{"attention", tdsPacket(tds.TypeAttention, 8, true, 0), false},
		{"PRELOGIN without EOM", tdsPacket(tds.TypePrelogin, 100, false, 1), false},
		{"a server's packet type", tdsPacket(tds.TypeTabularResult, 100, false, 1), false},
		{"length field not the write's", rpc[:99], false},
		{"shorter than a header", rpc[:7], false},
		{"zeros", make([]byte, 512), false},
		{"a TLS record", []byte{0x17, 0x03, 0x03, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}, false},
	}
	for _, tc := range tests {
		if got := continues(tc.p); got != tc.want {
			t.Errorf("%s: continues = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// write is one socket write in a batch test: its size and whether hold was set.
type write struct {
	size int
	hold bool
}

func TestBatchWrites(t *testing.T) {
	const rec = 4096 + 29        // a 4096-byte packet as a TLS 1.2 AES-GCM record
	const full = batchSize / rec // records in a full batch
	tests := []struct {
		name   string
		writes []write
		want   []int // sizes of the socket writes made
	}{
		{"nothing held", []write{{60, false}, {200, false}}, []int{60, 200}},
		{"a message of four records", []write{{rec, true}, {rec, true}, {rec, true}, {100, false}},
			[]int{3*rec + 100}},
		{"a full batch goes before the record that would pass the limit",
			slices.Concat(slices.Repeat([]write{{rec, true}}, full+1), []write{{100, false}}),
			[]int{full * rec, rec + 100}},
		{"a write larger than half a batch goes alone", []write{{40000, true}, {40000, true}, {10, false}},
			[]int{40000, 40000, 10}},
		{"held bytes go before a large write", []write{{rec, true}, {40000, false}}, []int{rec + 40000}},
		{"held bytes go before a large write that does not fit", []write{{rec, true}, {rec, true}, {60000, false}},
			[]int{2 * rec, 60000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				w    batchSink
				b    batch
				sent [][]byte
			)
			for i, wr := range tc.writes {
				p := bytes.Repeat([]byte{byte(i)}, wr.size)
				sent = append(sent, p)
				b.hold.Store(wr.hold)
				if n, err := b.write(&w, p); n != len(p) || err != nil {
					t.Fatalf("write %d: %d, %v; want %d, nil", i, n, err, len(p))
				}
			}
			if got := w.sizes(); !slices.Equal(got, tc.want) {
				t.Errorf("socket writes of %v bytes, want %v", got, tc.want)
			}
			if !bytes.Equal(bytes.Join(w.writes, nil), bytes.Join(sent, nil)) {
				t.Error("the bytes written differ from those given")
			}
			if b.bufp != nil {
				t.Error("bytes still held after a write without hold")
			}
		})
	}
}

// A write without hold and nothing held goes to the socket as it came: no copy.
func TestBatchNoCopy(t *testing.T) {
	p := make([]byte, 200)
	var got []byte
	var b batch
	if _, err := b.write(writerFunc(func(q []byte) (int, error) { got = q; return len(q), nil }), p); err != nil {
		t.Fatal(err)
	}
	if &got[0] != &p[0] {
		t.Error("the bytes were copied")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// An error writing held bytes is returned by the write that sends them, nothing stays held,
// and the error is sticky: part of the held bytes may have left, so no later write reaches the
// socket, where it would follow a gap.
func TestBatchError(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		end  func(b *batch, w *batchSink) (int, error) // the write whose flush fails
	}{
		{"the packet that ends the message", func(b *batch, w *batchSink) (int, error) {
			b.hold.Store(false)
			return b.write(w, make([]byte, 100))
		}},
		{"a packet that passes the limit", func(b *batch, w *batchSink) (int, error) {
			return b.write(w, make([]byte, batchSize-100))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				w batchSink
				b batch
			)
			b.hold.Store(true)
			if _, err := b.write(&w, make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
			w.fail = boom
			if n, err := tc.end(&b, &w); n != 0 || !errors.Is(err, boom) {
				t.Fatalf("failing write: %d, %v; want 0 and %v", n, err, boom)
			}
			if b.bufp != nil {
				t.Fatal("bytes held after a failed write")
			}
			w.fail = nil
			before := len(w.writes)
			for _, hold := range []bool{true, false} {
				b.hold.Store(hold)
				if n, err := b.write(&w, make([]byte, 50)); n != 0 || !errors.Is(err, boom) {
					t.Fatalf("write after the failure (hold %v): %d, %v; want 0 and the first error", hold, n, err)
				}
			}
			if b.passes() {
				t.Error("passes() after a failure: the socket would take the next write directly")
			}
			if len(w.writes) != before {
				t.Errorf("%d writes reached the socket after the failure", len(w.writes)-before)
			}
		})
	}
}

// Random messages of random writes: whenever a write without hold returns, everything given
// so far has been written, in order, and a socket write larger than the limit is a single
// write given.
func TestBatchRandomMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var (
		w             batchSink
		b             batch
		sent, written []byte
		sizes         = map[int]bool{}
		checked, mark int
	)
	for range 200 {
		writes := 1 + rng.IntN(8)
		size := 1 + rng.IntN(40<<10)
		for i := range writes {
			last := i == writes-1
			n := size
			if last {
				n = rng.IntN(size + 1)
			}
			sizes[n] = true
			p := bytes.Repeat([]byte{byte(rng.Uint32())}, n)
			sent = append(sent, p...)
			b.hold.Store(!last)
			if _, err := b.write(&w, p); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range w.writes[checked:] {
			written = append(written, p...)
			if len(p) > batchSize && !sizes[len(p)] {
				t.Fatalf("a socket write of %d bytes joins writes beyond the limit %d", len(p), batchSize)
			}
		}
		checked = len(w.writes)
		if !bytes.Equal(written[mark:], sent[mark:]) {
			t.Fatal("after a message ended, the bytes written differ from those given")
		}
		mark = len(sent)
	}
}

// Through go-mssqldb and a recording proxy: a 1 MiB parameter arrives whole in a few socket
// writes, in every encryption mode, and in full and strict encryption every TLS record the
// client sends holds at most one TDS packet (packets are never merged into one record: docs/protocol.md, "Record sizes").
func TestUploadRecords(t *testing.T) {
	const n, packetSize = 1 << 20, 4096
	for _, mode := range tdstest.Modes() {
		t.Run(mode.Name, func(t *testing.T) {
			srv := startServer(t, mode.Config)
			p, err := wiretest.NewProxy(srv.Addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close() }()
			d := &countingDialer{base: p}
			db, err := bridgedDB(t, srv.DSN("encrypt="+mode.Encrypt, "certificate="+srv.CAFile(),
				fmt.Sprintf("packet size=%d", packetSize)), WithDialer(d))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			value := bytes.Repeat([]byte("0123456789abcdef"), n/16)
			before := d.writes.Load()
			// Rows read to the end, not QueryRow: its Scan closes the rows after the first row,
			// and go-mssqldb then writes an ATTENTION when its reader has not yet taken the
			// final DONE, one socket write more that is not the upload's.
			var got int64
			rows, err := conn.QueryContext(ctx, "SELECT DATALENGTH(@p1)", value)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				if err := rows.Scan(&got); err != nil {
					t.Fatal(err)
				}
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if got != n {
				t.Fatalf("DATALENGTH = %d, want %d", got, n)
			}
			// One socket write per batchSize, not one per packet (257 here).
			if w := d.writes.Load() - before; w > n/batchSize+2 {
				t.Errorf("the upload took %d socket writes, want at most %d", w, n/batchSize+2)
			}
			_ = conn.Close()
			_ = db.Close()
			sessions := p.Sessions()
			if len(sessions) != 1 {
				t.Fatalf("%d sessions through the proxy, want 1", len(sessions))
			}
			records, packets := 0, 0
			for _, u := range sessions[0].Units(wiretest.ClientToServer) {
				switch {
				case u.Kind == wiretest.UnitTLS && u.Type() == 0x17:
					records++
					// Plaintext plus at most 32 bytes of record overhead (explicit nonce,
					// tag, TLS 1.3 inner type).
					if l := int(binary.BigEndian.Uint16(u.Bytes[3:5])); l > packetSize+32 {
						t.Fatalf("a TLS record of %d bytes: more than one packet of %d", l, packetSize)
					}
				case u.Kind == wiretest.UnitTDS && u.Type() == byte(tds.TypeRPC):
					packets++
				}
			}
			want := n / (packetSize - tds.HeaderSize)
			if mode.Name == "none" || mode.Name == "login-only" { // plaintext after LOGIN7
				if packets < want {
					t.Fatalf("%d RPC packets, want at least %d", packets, want)
				}
			} else if records < want {
				t.Fatalf("%d application-data records, want at least %d", records, want)
			}
		})
	}
}
