package bridge

import (
	"bytes"
	"io"
	"testing"

	"github.com/tdsbridge/tdsbridge/tds"
)

// A connection without TLS: StartPlaintext before any handshake byte gives
// raw bytes through the read-ahead buffer, one socket Read for many small
// caller Reads, and Writes straight to the socket.
func TestPlaintextNoTLS(t *testing.T) {
	for _, tr := range append(transports, memTransport) {
		t.Run(tr.name, func(t *testing.T) {
			c, s := tr.pair(t)
			craw := &countConn{Conn: c}
			b := New(craw, Options{})
			defer b.Close()
			if err := b.StartPlaintext(); err != nil {
				t.Fatal(err)
			}
			if b.State() != StatePlaintext {
				t.Fatalf("state %v", b.State())
			}
			msg := pattern(3000, 14)
			go s.Write(msg)
			got := readN(t, b, 8, 8) // a TDS header...
			if reads := craw.read.Load(); tr.name != "tcp" && reads != int64(len(msg)) {
				t.Fatalf("socket read %d bytes, want the whole %d-byte write in one go", reads, len(msg))
			}
			got = append(got, readN(t, b, len(msg)-8, 4096)...) // ...then the body
			if !bytes.Equal(got, msg) {
				t.Fatal("bytes differ")
			}

			// A Read at least as large as the buffer, with the buffer empty,
			// goes straight into the caller's slice.
			b.rmu.Lock()
			w0 := b.ra.w
			b.rmu.Unlock()
			go s.Write(pattern(100, 15))
			big := make([]byte, DefaultReadAheadSize)
			n, err := b.Read(big)
			if err != nil || !bytes.Equal(big[:n], pattern(100, 15)[:n]) {
				t.Fatalf("Read = %d, %v", n, err)
			}
			b.rmu.Lock()
			w := b.ra.w
			b.rmu.Unlock()
			if w != w0 {
				t.Fatalf("a large Read went through the buffer (%d bytes)", w-w0)
			}
			readN(t, b, 100-n, 100)

			before := craw.writes.Load()
			copied := make(chan struct{})
			go func() { io.CopyN(io.Discard, s, 5); close(copied) }()
			if _, err := b.Write([]byte("plain")); err != nil {
				t.Fatal(err)
			}
			<-copied
			if craw.writes.Load()-before != 1 {
				t.Fatal("Write did not make exactly one socket write")
			}
			s.Close()
			if _, err := b.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("Read at the end = %v, want io.EOF", err)
			}
		})
	}
}

// Login-only encryption, server side: the first LOGIN7 packet arrives in
// one TLS record and the rest of the login in plaintext right behind it.
// The bytes the bridge read ahead after that record must come out as
// plaintext after StartPlaintext.
func TestPlaintextLoginOnly(t *testing.T) {
	small, _ := pkis(t)
	for _, tr := range []transport{memTransport, transports[1]} {
		for _, v := range versions {
			t.Run(tr.name+"/"+v.name, func(t *testing.T) {
				p := newTLSPair(t, pairConfig{tr: tr, pki: small, tls13: v.tls13})
				var login, rest bytes.Buffer
				w := tds.NewWriter(&login, 512)
				w.BeginMessage(tds.TypeLogin7, 0)
				w.Write(pattern(1200, 16))
				w.EndMessage()
				first := login.Bytes()[:512]
				rest.Write(login.Bytes()[512:])
				tds.NewWriter(&rest, 4096).WriteMessage(tds.TypeSQLBatch, []byte("SELECT 1"))

				// Client: the first packet inside TLS, then plaintext.
				if _, err := p.ctc.Write(first); err != nil {
					t.Fatal(err)
				}
				if err := p.cb.StartPlaintext(); err != nil {
					t.Fatal(err)
				}
				if _, err := p.cb.Write(rest.Bytes()); err != nil {
					t.Fatal(err)
				}

				// Server: one TLS record (read with room to spare), then plaintext.
				buf := make([]byte, 16<<10)
				n, err := p.stc.Read(buf)
				if err != nil || !bytes.Equal(buf[:n], first) {
					t.Fatalf("TLS Read = %d, %v; want the first LOGIN7 packet", n, err)
				}
				if tr.name == "mem" {
					p.sb.rmu.Lock()
					ahead := p.sb.ra.buffered()
					p.sb.rmu.Unlock()
					if ahead != rest.Len() {
						t.Fatalf("%d bytes read ahead behind the LOGIN7 record, want %d", ahead, rest.Len())
					}
				}
				if err := p.sb.StartPlaintext(); err != nil {
					t.Fatal(err)
				}
				r := tds.NewReader(p.sb, tds.ReaderConfig{MaxPacketSize: 4096})
				typ, payload, err := r.ReadMessage()
				if err != nil || typ != tds.TypeLogin7 {
					t.Fatalf("plaintext LOGIN7 rest: %v, %v", typ, err)
				}
				if !bytes.Equal(payload, pattern(1200, 16)[504:]) {
					t.Fatal("LOGIN7 continuation differs")
				}
				typ, payload, err = r.ReadMessage()
				if err != nil || typ != tds.TypeSQLBatch || string(payload) != "SELECT 1" {
					t.Fatalf("batch: %v %q %v", typ, payload, err)
				}
			})
		}
	}
}
