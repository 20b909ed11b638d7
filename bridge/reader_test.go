package bridge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"strings"
	"testing"
)

// writeRecords makes the server send count records of size bytes each
// (one tls.Conn Write per record) and returns what it sent.
func writeRecords(t *testing.T, tc *tls.Conn, count, size int) []byte {
	t.Helper()
	if err := sendRecords(tc, count, size); err != nil {
		t.Fatal(err)
	}
	return writeRecordsData(count, size)
}

// sendRecords is writeRecords for other goroutines.
func sendRecords(tc *tls.Conn, count, size int) error {
	for i := 0; i < count; i++ {
		if _, err := tc.Write(pattern(size, i*13)); err != nil {
			return err
		}
	}
	return nil
}

var versions = []struct {
	name  string
	tls13 bool
}{{"tls12", false}, {"tls13", true}}

// Many small records, all complete in the read-ahead buffer, come
// back from one Read, bytes intact; never more than len(p) or the chunk.
func TestReaderCoalesces(t *testing.T) {
	small, _ := pkis(t)
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: memTransport, pki: small, tls13: v.tls13})
			sent := writeRecords(t, p.stc, 50, 100)
			before := p.craw.read.Load()
			r := NewReader(p.ctc, p.cb, 64<<10)
			buf := make([]byte, 64<<10)
			n, err := r.Read(buf)
			if err != nil || n != len(sent) || !bytes.Equal(buf[:n], sent) {
				t.Fatalf("Read = %d, %v; want all %d bytes of 50 records in one call", n, err, len(sent))
			}
			if reads := p.craw.read.Load() - before; reads == 0 {
				t.Fatal("no socket read")
			}

			// Bounded by the chunk and by len(p).
			sent = writeRecords(t, p.stc, 50, 100)
			r = NewReader(p.ctc, p.cb, 1000)
			var got []byte
			for len(got) < len(sent) {
				size := 64 << 10
				if len(got) >= 2000 {
					size = 250 // not a record boundary: tls keeps the rest
				}
				n, err := r.Read(buf[:size])
				if err != nil {
					t.Fatal(err)
				}
				if n > min(size, 1000) {
					t.Fatalf("Read returned %d bytes, more than min(len(p)=%d, chunk=1000)", n, size)
				}
				if size == 64<<10 && n != 1000 {
					t.Fatalf("Read returned %d bytes, want a full chunk of 1000", n)
				}
				got = append(got, buf[:n]...)
			}
			if !bytes.Equal(got, sent) {
				t.Fatal("bytes differ")
			}
		})
	}
}

// A corrupted record k: every byte before it is delivered (the
// batch first, with a nil error), then the MAC error.
func TestReaderCorruptRecord(t *testing.T) {
	small, _ := pkis(t)
	for _, v := range versions {
		for _, tr := range []transport{memTransport, transports[1]} {
			t.Run(v.name+"/"+tr.name, func(t *testing.T) {
				p := newTLSPair(t, pairConfig{tr: tr, pki: small, tls13: v.tls13})
				const k, size = 7, 500
				p.sraw.corrupt.Store(p.sraw.writes.Load() + k)
				go sendRecords(p.stc, k+3, size)
				want := writeRecordsData(k-1, size)
				r := NewReader(p.ctc, p.cb, 0)
				var got []byte
				buf := make([]byte, 64<<10)
				var err error
				for err == nil {
					var n int
					n, err = r.Read(buf)
					if err != nil && n > 0 {
						t.Fatalf("Read returned %d bytes with the error %v; want the batch first, the error on the next call", n, err)
					}
					got = append(got, buf[:n]...)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("got %d bytes before the error, want the %d bytes of records 1..%d", len(got), len(want), k-1)
				}
				if !strings.Contains(err.Error(), "bad record MAC") {
					t.Fatalf("error %v, want bad record MAC", err)
				}
				if _, err2 := r.Read(buf); err2 == nil {
					t.Fatal("Read after the MAC error succeeded")
				}
			})
		}
	}
}

func writeRecordsData(count, size int) []byte {
	var all []byte
	for i := 0; i < count; i++ {
		all = append(all, pattern(size, i*13)...)
	}
	return all
}

// The batch stops in front of a record that is not application
// data: the TLS 1.2 close_notify alert stays in the bridge until the next
// Read, which returns io.EOF after the data. In TLS 1.3 close_notify looks
// like data: it ends the batch and io.EOF comes on the next call.
func TestReaderCloseNotifyAfterData(t *testing.T) {
	small, _ := pkis(t)
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: memTransport, pki: small, tls13: v.tls13})
			sent := writeRecords(t, p.stc, 3, 1000)
			if err := p.stc.Close(); err != nil {
				t.Fatal(err)
			}
			r := NewReader(p.ctc, p.cb, 0)
			buf := make([]byte, 64<<10)
			n, err := r.Read(buf)
			if err != nil || !bytes.Equal(buf[:n], sent) {
				t.Fatalf("Read = %d, %v; want the %d bytes of data and no error", n, err, len(sent))
			}
			if !v.tls13 {
				p.cb.rmu.Lock()
				pending, typ := p.cb.ra.buffered(), p.cb.ra.buf[p.cb.ra.r]
				p.cb.rmu.Unlock()
				if pending == 0 || typ != 0x15 {
					t.Fatalf("after the batch the bridge holds %d bytes (type %#x); want the unread alert", pending, typ)
				}
			}
			if n, err := r.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("next Read = %d, %v; want io.EOF", n, err)
			}
		})
	}
}

// The no-block mode's "would block" is temporary: crypto/tls does not keep
// it, and the next blocking Read gets the record once it is complete.
func TestNoBlockNotSticky(t *testing.T) {
	small, _ := pkis(t)
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			p := newTLSPair(t, pairConfig{tr: memTransport, pki: small, tls13: v.tls13})
			setModes(p.cb, emptyTLS13, true)
			_, err := p.ctc.Read(make([]byte, 100))
			setModes(p.cb, 0, false)
			if !errors.Is(err, errWouldBlock) {
				t.Fatalf("no-block Read with nothing buffered = %v, want errWouldBlock", err)
			}
			roundTrip(t, p.stc, p.ctc, []byte("still fine"))
		})
	}
}

func TestEmptyRecordLen(t *testing.T) {
	tests := []struct {
		name string
		cs   tls.ConnectionState
		want int32
	}{
		{"tls13", tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256}, 17},
		{"tls13 chacha", tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_CHACHA20_POLY1305_SHA256}, 17},
		{"tls12 ecdsa gcm", tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, 24},
		{"tls12 rsa gcm 256", tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}, 24},
		{"tls12 chacha", tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}, 16},
		{"tls12 cbc", tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256}, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := emptyRecordLen(tt.cs); got != tt.want {
				t.Fatalf("emptyRecordLen = %d, want %d", got, tt.want)
			}
		})
	}
}

// Records with a length at or below the threshold (possibly empty) and
// records of other types are never read in no-block mode.
func TestReaderSkipsShortAndOtherRecords(t *testing.T) {
	c, s := memPipe()
	b := New(c, Options{Direct: true})
	defer b.Close()
	defer s.Close()
	s.Write(bytes.Join([][]byte{
		record(0x17, 30, 1), // read by a blocking Read
		record(0x17, 24, 2), // possibly empty under TLS 1.2 GCM
	}, nil))
	buf := make([]byte, 100)
	if n, err := b.Read(buf); n != 35 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	setModes(b, emptyTLS12GCM, true)
	defer setModes(b, 0, false)
	if recordReady(b, emptyTLS12GCM) {
		t.Fatal("a 24-byte record is ready under the GCM threshold")
	}
	if _, err := b.Read(buf); !errors.Is(err, errWouldBlock) {
		t.Fatalf("no-block Read of a possibly empty record = %v, want errWouldBlock", err)
	}
	setModes(b, emptyTLS12ChaCha, true)
	if n, err := b.Read(buf); n != 29 || err != nil {
		t.Fatalf("no-block Read under the ChaCha threshold = %d, %v; want the 29-byte record", n, err)
	}
	s.Write(record(0x16, 100, 3))
	if recordReady(b, emptyTLS12ChaCha) {
		t.Fatal("a handshake record is ready")
	}
	if _, err := b.Read(buf); !errors.Is(err, errWouldBlock) {
		t.Fatalf("no-block Read of a handshake record = %v, want errWouldBlock", err)
	}
}

func setModes(b *Conn, minLen int32, noBlock bool) {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	b.ra.coalesce, b.ra.noBlock = int(minLen), noBlock
}

// recordReady reports whether b holds the next record complete, as
// application data longer than minLen.
func recordReady(b *Conn, minLen int) bool {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	return b.ra.readyRecord(minLen)
}

// In coalescing mode a blocking Read hands over its record and then the
// approved records behind it that fit, the last one possibly in part; it
// stops in front of a record of another type.
func TestCoalescingHandout(t *testing.T) {
	c, s := memPipe()
	b := New(c, Options{Direct: true})
	defer b.Close()
	defer s.Close()
	recs := [][]byte{
		record(0x16, 10, 1),  // any type: the record the caller asked for
		record(0x17, 100, 2), // approved
		record(0x17, 100, 3), // approved, handed in part
		record(0x15, 2, 4),   // alert: never in a batch
	}
	s.Write(bytes.Join(recs, nil))
	setModes(b, emptyTLS12GCM, false)
	defer setModes(b, 0, false)
	buf := make([]byte, 15+105+50)
	n, err := b.Read(buf)
	if err != nil || n != len(buf) || !bytes.Equal(buf, bytes.Join(recs, nil)[:len(buf)]) {
		t.Fatalf("Read = %d, %v; want the first record, the second and half the third", n, err)
	}
	buf = make([]byte, 1000)
	n, err = b.Read(buf)
	if err != nil || !bytes.Equal(buf[:n], recs[2][50:]) {
		t.Fatalf("Read = %d, %v; want the rest of the third record and not the alert", n, err)
	}
}
