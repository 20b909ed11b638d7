package bridge

import (
	"crypto/tls"
	"net"
	"slices"
	"testing"
	"unsafe"
)

// stackConn records, on every Read, how many bytes of stack lie between
// mark (set by measuredRead) and its own frame.
type stackConn struct {
	net.Conn
	mark, depth uintptr
}

//go:noinline
func (c *stackConn) Read(p []byte) (int, error) {
	var here byte
	c.depth = c.mark - uintptr(unsafe.Pointer(&here))
	return c.Conn.Read(p)
}

// measuredRead makes one Read of tc and returns the stack depth of the
// socket Read under it (0 if the socket was not read).
//
//go:noinline
func measuredRead(tc *tls.Conn, sc *stackConn, p []byte) (uintptr, error) {
	var here byte
	sc.mark, sc.depth = uintptr(unsafe.Pointer(&here)), 0
	_, err := tc.Read(p)
	return sc.depth, err
}

// A passthrough Read keeps the path from crypto/tls to the socket shallow
// (docs/design.md, "Stack depth"): the socket's Read sits at most a few
// hundred bytes of stack deeper under a tls.Conn on the bridge than under
// a tls.Conn on the bare socket, with and without CoalesceRecords.
func TestReadStackDepth(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes the frames")
	}
	small, _ := pkis(t)
	depth := func(bridged, coalesce bool) uintptr {
		c, s := memPipe()
		defer c.Close()
		defer s.Close()
		sc := &stackConn{Conn: c}
		ccfg, scfg := pairConfig{pki: small, tls13: true}.configs()
		var conn net.Conn = sc
		var b *Conn
		if bridged {
			b = New(sc, Options{Direct: true})
			conn = b
		}
		tc, ts := tls.Client(conn, ccfg), tls.Server(s, scfg)
		handshakeBoth(t, tc, ts)
		if coalesce {
			if err := b.CoalesceRecords(tc.ConnectionState()); err != nil {
				t.Fatal(err)
			}
		}
		// Run in a goroutine whose stack is grown first, so that it does not
		// move during a measured Read; take the median of many.
		res := make(chan uintptr)
		go func() {
			growStack(64)
			var ds []uintptr
			p := make([]byte, 1024)
			for i := range 41 {
				if _, err := ts.Write(pattern(100, i)); err != nil {
					t.Error(err)
					break
				}
				d, err := measuredRead(tc, sc, p)
				if err != nil {
					t.Error(err)
					break
				}
				if d > 0 {
					ds = append(ds, d)
				}
			}
			slices.Sort(ds)
			if len(ds) == 0 {
				res <- 0
				return
			}
			res <- ds[len(ds)/2]
		}()
		return <-res
	}
	plain := depth(false, false)
	if plain == 0 {
		t.Fatal("the socket was never read")
	}
	for _, coalesce := range []bool{false, true} {
		d := depth(true, coalesce)
		t.Logf("coalesce=%v: socket Read %d bytes of stack below tls.Conn.Read, %d on a bare socket (+%d)", coalesce, d, plain, int(d)-int(plain))
		if d > plain+maxExtraStack {
			t.Errorf("coalesce=%v: the bridge adds %d bytes of stack between crypto/tls and the socket, want at most %d", coalesce, d-plain, maxExtraStack)
		}
	}
}

// maxExtraStack is the stack a passthrough Read may add on the way to the
// socket: the frames of Read and fill.
const maxExtraStack = 128

// growStack uses about kib KiB of stack and returns, leaving the goroutine's stack grown.
//
//go:noinline
func growStack(kib int) byte {
	var pad [1024]byte
	if kib > 1 {
		pad[0] = growStack(kib - 1)
	}
	return pad[kib%len(pad)]
}
