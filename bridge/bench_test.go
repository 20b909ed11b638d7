package bridge

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/cputime"
)

// benchOpBytes is what one benchmark operation reads.
const benchOpBytes = 1 << 20

// BenchmarkRead compares the client side of a plain tls.Conn on a loopback
// TCP socket with a tls.Conn on a bridge (Direct mode, so both run the
// same handshake) read through the coalescing Reader with a 64 KiB chunk
// ("bridge"), or read on its own after CoalesceRecords ("coalesce", the
// way mssqlbridge serves go-mssqldb).
// The server, in a goroutine, is a plain tls.Conn writing records of
// exactly the given size (dynamic record sizing off) into a 64 KiB write
// buffer, so that it makes one socket write per 64 KiB like a server in
// its own process with a busy socket, instead of one per record, which
// would make the server's system calls, not the client, the bottleneck of
// the measurement. Two read patterns:
// 64 KiB reads, and TDS-style reads (an 8-byte header, then a 4088-byte
// body, as go-mssqldb reads 4096-byte packets).
func BenchmarkRead(b *testing.B) {
	for _, v := range versions {
		for _, rec := range []int{1 << 10, 4 << 10, 16 << 10} {
			for _, pat := range []string{"read64k", "tds4096"} {
				for _, impl := range []string{"tls", "bridge", "coalesce"} {
					name := fmt.Sprintf("%s/rec=%dk/%s/%s", v.name, rec>>10, pat, impl)
					b.Run(name, func(b *testing.B) { benchRead(b, v.tls13, rec, pat, impl) })
				}
			}
		}
	}
}

// benchClient runs a TLS client handshake with ccfg over conn, on a bridge in passthrough
// (TLS straight on the socket) when bridged; bc is that bridge, or nil. The tls.Conn is closed
// when the benchmark function returns.
func benchClient(b *testing.B, conn net.Conn, ccfg *tls.Config, bridged bool) (tc *tls.Conn, bc *Conn) {
	b.Helper()
	if bridged {
		bc = New(conn, Options{Direct: true})
		conn = bc
	}
	tc = tls.Client(conn, ccfg)
	b.Cleanup(func() { _ = tc.Close() })
	if err := tc.Handshake(); err != nil {
		b.Fatal(err)
	}
	return tc, bc
}

func benchRead(b *testing.B, tls13 bool, recSize int, pat string, impl string) {
	bridged := impl != "tls"
	small, _ := pkis(b)
	c, s := tcpPair(b)
	ccfg, scfg := pairConfig{pki: small, tls13: tls13}.configs()
	bs := &bufConn{Conn: s, w: bufio.NewWriterSize(s, 64<<10)}
	srv := tls.Server(bs, scfg)
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
		done <- bs.w.Flush()
	}()
	cc := &readCounter{Conn: c}
	tc, bc := benchClient(b, cc, ccfg, bridged)
	var r io.Reader = tc
	switch impl {
	case "bridge":
		r = NewReader(tc, bc, 64<<10)
	case "coalesce":
		if err := bc.CoalesceRecords(tc.ConnectionState()); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, 64<<10)
	b.SetBytes(benchOpBytes)
	b.ReportAllocs()
	b.ResetTimer()
	reads0 := cc.reads
	cpu0, cpuErr := cputime.Process()
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
	mb := float64(total) / 1e6
	b.ReportMetric(float64(cc.reads-reads0)/mb, "sysreads/MB")
	// Process CPU counts client and server together; the server does the
	// same work in both variants, so differences are the client's.
	if cpu1, err := cputime.Process(); err == nil && cpuErr == nil {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1e6/mb, "cpu-ms/MB")
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// readCounter counts Read calls on the client's socket (used by one
// goroutine only).
type readCounter struct {
	net.Conn
	reads int64
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.reads++
	return c.Conn.Read(p)
}

// bufConn buffers writes (flushed when the buffer is full and before every
// Read, so a handshake flight goes out before its sender waits).
type bufConn struct {
	net.Conn
	w *bufio.Writer
}

func (c *bufConn) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *bufConn) Read(p []byte) (int, error) {
	if err := c.w.Flush(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// BenchmarkConnRead measures the bridge's own Read path without TLS or a
// network: a passthrough Read of records of the given size from a socket
// that always has bytes, into a 20 KiB buffer, one record per Read or
// coalesced (CoalesceRecords), and with reads as small as the 5-byte
// header crypto/tls asks for first.
func BenchmarkConnRead(b *testing.B) {
	for _, rec := range []int{100, 4096} {
		for _, mode := range []string{"record", "coalesce"} {
			b.Run(fmt.Sprintf("rec=%d/%s", rec, mode), func(b *testing.B) {
				var stream []byte
				for i := range 16 {
					stream = append(stream, record(0x17, rec, i)...)
				}
				c := New(&loopConn{stream: stream}, Options{Direct: true})
				if mode == "coalesce" {
					if err := c.CoalesceRecords(tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS13}); err != nil {
						b.Fatal(err)
					}
				}
				p := make([]byte, 20<<10)
				b.SetBytes(int64(rec + recordHeaderLen))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Read(p[:recordHeaderLen]); err != nil {
						b.Fatal(err)
					}
					if _, err := c.Read(p[:rec]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRoundTrip measures a small exchange over loopback TCP, as a
// query and its short answer: the client writes 64 bytes, the server
// answers with one 300-byte record, and the client reads it as go-mssqldb
// reads a packet (an 8-byte header, then the body), through a tls.Conn on
// the socket ("tls") or on the bridge after CoalesceRecords ("coalesce").
func BenchmarkRoundTrip(b *testing.B) {
	for _, impl := range []string{"tls", "coalesce"} {
		b.Run(impl, func(b *testing.B) {
			small, _ := pkis(b)
			c, s := tcpPair(b)
			ccfg, scfg := pairConfig{pki: small, tls13: true}.configs()
			srv := tls.Server(s, scfg)
			go func() {
				req, resp := make([]byte, 64), make([]byte, 300)
				for {
					if _, err := io.ReadFull(srv, req); err != nil {
						return
					}
					if _, err := srv.Write(resp); err != nil {
						return
					}
				}
			}()
			tc, bc := benchClient(b, c, ccfg, impl == "coalesce")
			if bc != nil {
				if err := bc.CoalesceRecords(tc.ConnectionState()); err != nil {
					b.Fatal(err)
				}
			}
			req, buf := make([]byte, 64), make([]byte, 300)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(tc, buf[:8]); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(tc, buf[8:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
