package tdstest

import (
	"net"
	"runtime"
	"testing"

	"github.com/tdsbridge/tdsbridge/tds"
)

// countingWriter counts the bytes of the packets the server writes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// TestResponseIsStreamed: answering an 8 MiB value allocates a small, fixed amount of memory, not
// the value: the server streams it through the packet writer.
func TestResponseIsStreamed(t *testing.T) {
	srv := &Server{logf: func(string, ...any) {}}
	cw := &countingWriter{}
	a, b := net.Pipe() // only for the log's RemoteAddr
	defer a.Close()
	defer b.Close()
	c := &conn{srv: srv, raw: a, faults: faultState{f: &Faults{}}, sink: &faultWriter{w: cw}}
	c.out = tds.NewWriter(c.sink, 4096)
	const query = "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 4194304)" // 8 MiB
	if err := c.batch(query); err != nil {                                 // warm up
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := c.batch(query); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if cw.n < 2*8<<20 {
		t.Fatalf("wrote %d bytes for two 8 MiB values", cw.n)
	}
	if allocated > 256<<10 {
		t.Fatalf("answering an 8 MiB value allocated %d bytes", allocated)
	}
	t.Logf("8 MiB value: %d bytes allocated", allocated)
}
