package bridge

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"
)

// benchOpBytes is what one benchmark operation reads.
const benchOpBytes = 1 << 20

// BenchmarkRead compares the client side of a plain tls.Conn on a loopback
// TCP socket with a tls.Conn on a bridge (Direct mode, so both run the
// same handshake) read through the coalescing Reader with a 64 KiB chunk.
// The server, in a goroutine, is a plain tls.Conn writing records of
// exactly the given size (dynamic record sizing off). Two read patterns:
// 64 KiB reads, and TDS-style reads (an 8-byte header, then a 4088-byte
// body, as go-mssqldb reads 4096-byte packets).
func BenchmarkRead(b *testing.B) {
	for _, v := range versions {
		for _, rec := range []int{1 << 10, 4 << 10, 16 << 10} {
			for _, pat := range []string{"read64k", "tds4096"} {
				for _, impl := range []string{"tls", "bridge"} {
					name := fmt.Sprintf("%s/rec=%dk/%s/%s", v.name, rec>>10, pat, impl)
					b.Run(name, func(b *testing.B) { benchRead(b, v.tls13, rec, pat, impl == "bridge") })
				}
			}
		}
	}
}

func benchRead(b *testing.B, tls13 bool, recSize int, pat string, bridged bool) {
	small, _ := pkis(b)
	c, s := tcpPair(b)
	ccfg, scfg := pairConfig{pki: small, tls13: tls13}.configs()
	srv := tls.Server(s, scfg)
	total := int64(b.N) * benchOpBytes
	done := make(chan error, 1)
	go func() {
		if err := srv.Handshake(); err != nil {
			done <- err
			return
		}
		chunk := make([]byte, recSize)
		for left := total; left > 0; left -= int64(len(chunk)) {
			if left < int64(len(chunk)) {
				chunk = chunk[:left]
			}
			if _, err := srv.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var conn net.Conn = c
	var bc *Conn
	if bridged {
		bc = New(c, Options{Direct: true})
		conn = bc
	}
	tc := tls.Client(conn, ccfg)
	defer tc.Close()
	if err := tc.Handshake(); err != nil {
		b.Fatal(err)
	}
	var r io.Reader = tc
	if bridged {
		r = NewReader(tc, bc, 64<<10)
	}
	buf := make([]byte, 64<<10)
	b.SetBytes(benchOpBytes)
	b.ReportAllocs()
	b.ResetTimer()
	var got int64
	switch pat {
	case "read64k":
		for got < total {
			n, err := r.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			got += int64(n)
		}
	case "tds4096":
		for got < total {
			h := min(8, total-got)
			if _, err := io.ReadFull(r, buf[:h]); err != nil {
				b.Fatal(err)
			}
			body := min(4088, total-got-h)
			if _, err := io.ReadFull(r, buf[:body]); err != nil {
				b.Fatal(err)
			}
			got += h + body
		}
	}
	b.StopTimer()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
