package reliability

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// loadConfig is one load run: conns goroutines, each with its own connection, each running
// queries queries whose values have random sizes from 1 byte to maxSize (log-uniform, so
// that every order of magnitude is exercised, plus the maximum itself now and then).
type loadConfig struct {
	conns, queries int
	maxSize        int
	seed           uint64
}

// loadTarget is a server setting the load is spread over.
type loadTarget struct {
	name   string
	cfg    tdstest.Config
	params []string
}

var loadTargets = []loadTarget{
	{"full", tdstest.Config{}, []string{"encrypt=true"}},
	// Records of 1000 bytes whatever the packet boundaries: the coalescing Reader's case.
	{"full-1000-byte-records", tdstest.Config{RecordSize: 1000}, []string{"encrypt=true", "packet size=16383"}},
	// Login-only: TLS for the first LOGIN7 packet, then the bridge's plaintext mode.
	{"login-only", tdstest.Config{Encryption: tdstest.EncryptOff}, []string{"encrypt=false"}},
	// TDS 8.0: TLS directly on TCP (the bridge in Direct mode), TLS 1.3.
	{"strict", tdstest.Config{Encryption: tdstest.EncryptStrict}, []string{"encrypt=strict"}},
	{"strict-700-byte-records", tdstest.Config{Encryption: tdstest.EncryptStrict, RecordSize: 700}, []string{"encrypt=strict", "packet size=8192"}},
	// No encryption: the bridge's plaintext mode with its read-ahead.
	{"none", tdstest.Config{Encryption: tdstest.EncryptNotSup}, []string{"encrypt=disable"}},
}

// Alphabets of the patterns: no quote, so that the query text needs no escaping; the nvarchar
// one has characters of 2 and 3 bytes in UTF-8.
var (
	binAlphabet   = []rune("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_+*")
	nvarAlphabet  = []rune("abcxyz019éжλ中€ßø")
	errValueCheck = fmt.Errorf("reliability: value check failed")
)

// loadReport is what a load run measured.
type loadReport struct {
	queries, bytes         int64
	elapsed                time.Duration
	heapBefore, heapAfter  uint64 // HeapAlloc after a GC
	heapPeak               uint64 // largest HeapInuse sampled during the run
	rssPeakKiB             int64  // VmHWM of the process at the end
	goroutinesBefore, peak int
}

func (r loadReport) String() string {
	return fmt.Sprintf("%d queries, %s of values in %v (%.1f MB/s); heap %s before, %s after (growth %s), peak in use %s; peak RSS (VmHWM) %s; goroutines %d before, peak %d",
		r.queries, describe(r.bytes), r.elapsed.Round(time.Millisecond), float64(r.bytes)/1e6/r.elapsed.Seconds(),
		describe(int64(r.heapBefore)), describe(int64(r.heapAfter)), describe(int64(r.heapAfter)-int64(r.heapBefore)),
		describe(int64(r.heapPeak)), describe(r.rssPeakKiB<<10), r.goroutinesBefore, r.peak)
}

// vmHWM returns the process's peak resident set size in KiB, from /proc/self/status (0 where
// there is no such file).
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// heapAlloc returns the live heap after two collections (the second empties sync.Pool's
// victim cache, which survives one).
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// query is one generated query and how to check its value.
type query struct {
	text     string
	nvarchar bool
	unit     []byte // the pattern in the value's encoding (UTF-8 for nvarchar, as scanned)
	count    int    // repetitions
}

// newQuery makes a query whose value has about size bytes on the wire.
func newQuery(rng *rand.Rand, size int) query {
	q := query{nvarchar: rng.IntN(2) == 1}
	alphabet := binAlphabet
	if q.nvarchar {
		alphabet = nvarAlphabet
	}
	pat := make([]rune, 1+rng.IntN(16))
	for i := range pat {
		pat[i] = alphabet[rng.IntN(len(alphabet))]
	}
	q.unit = []byte(string(pat))
	wire := len(pat) // bytes per repetition on the wire: 1 per varchar character, 2 per UCS-2 one
	if q.nvarchar {
		wire *= 2
	}
	q.count = max(1, size/wire)
	if q.nvarchar {
		q.text = fmt.Sprintf("SELECT REPLICATE(CAST(N'%s' AS nvarchar(max)), %d)", string(pat), q.count)
	} else {
		q.text = fmt.Sprintf("SELECT CAST(REPLICATE(CAST('%s' AS varchar(max)), %d) AS varbinary(max))", string(pat), q.count)
	}
	return q
}

// randomSize returns a size from 1 to maxSize, log-uniform, and maxSize itself one time in 20.
func randomSize(rng *rand.Rand, maxSize int) int {
	if rng.IntN(20) == 0 {
		return maxSize
	}
	return int(math.Exp(rng.Float64() * math.Log(float64(maxSize))))
}

// run executes q on conn and checks every byte of the value against the pattern. It returns
// the value's length.
func (q query) run(ctx context.Context, conn *sql.Conn) (int, error) {
	rows, err := conn.QueryContext(ctx, q.text)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %.60s...: no row", errValueCheck, q.text)
	}
	var v sql.RawBytes
	if err := rows.Scan(&v); err != nil {
		return 0, err
	}
	if want := q.count * len(q.unit); len(v) != want {
		return 0, fmt.Errorf("%w: %.60s...: %d bytes, want %d", errValueCheck, q.text, len(v), want)
	}
	// Compare in chunks of whole patterns with bytes.Equal (fast, even under -race).
	chunk := bytes.Repeat(q.unit, max(1, (64<<10)/len(q.unit)))
	for off := 0; off < len(v); off += len(chunk) {
		end := min(off+len(chunk), len(v))
		if !bytes.Equal(v[off:end], chunk[:end-off]) {
			return 0, fmt.Errorf("%w: %.60s...: value differs from the pattern in bytes %d..%d", errValueCheck, q.text, off, end)
		}
	}
	n := len(v)
	if rows.Next() {
		return 0, fmt.Errorf("%w: %.60s...: more than one row", errValueCheck, q.text)
	}
	return n, rows.Err()
}

// runLoad runs cfg against one tdstest server per load target, through database/sql and the
// bridged connector, and reports the figures. Every value is checked byte for byte; the first
// failure ends the run.
func runLoad(t *testing.T, cfg loadConfig) loadReport {
	t.Helper()
	quiet := func(string, ...any) {}
	rep := loadReport{heapBefore: heapAlloc(), goroutinesBefore: runtime.NumGoroutine()}
	dbs := make([]*sql.DB, len(loadTargets))
	servers := make([]*tdstest.Server, len(loadTargets))
	// The servers are closed before the final measurement (and on every way out).
	closeServers := func() {
		for _, s := range servers {
			if s != nil {
				_ = s.Close()
			}
		}
	}
	defer closeServers()
	for i, lt := range loadTargets {
		scfg := lt.cfg
		scfg.Logf = quiet
		s, err := tdstest.NewServer(scfg)
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = s
		db := openBridged(t, s.DSN(append(lt.params, "certificate="+s.CAFile())...))
		db.SetMaxOpenConns(cfg.conns)
		db.SetMaxIdleConns(cfg.conns)
		dbs[i] = db
	}

	// Sample the heap and the goroutine count while the load runs.
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				rep.heapPeak = max(rep.heapPeak, ms.HeapInuse)
				rep.peak = max(rep.peak, runtime.NumGoroutine())
			}
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg             sync.WaitGroup
		queries, total atomic.Int64
		errOnce        sync.Once
		firstErr       error
	)
	start := time.Now()
	for c := range cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := c % len(loadTargets)
			fail := func(err error) {
				errOnce.Do(func() { firstErr = fmt.Errorf("connection %d (%s): %w", c, loadTargets[target].name, err) })
				cancel()
			}
			rng := rand.New(rand.NewPCG(cfg.seed, uint64(c)))
			conn, err := dbs[target].Conn(ctx)
			if err != nil {
				fail(err)
				return
			}
			defer conn.Close()
			for range cfg.queries {
				if ctx.Err() != nil {
					return
				}
				q := newQuery(rng, randomSize(rng, cfg.maxSize))
				n, err := q.run(ctx, conn)
				if err != nil {
					fail(err)
					return
				}
				queries.Add(1)
				total.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	close(stop)
	<-sampled
	for _, db := range dbs {
		_ = db.Close()
	}
	closeServers()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	rep.queries, rep.bytes = queries.Load(), total.Load()
	rep.heapAfter = heapAlloc()
	rep.rssPeakKiB = vmHWM()
	return rep
}

// checkLoad applies the bounds every load run must meet.
func checkLoad(t *testing.T, cfg loadConfig, rep loadReport) {
	t.Helper()
	t.Logf("load %dx%d up to %s: %v", cfg.conns, cfg.queries, describe(int64(cfg.maxSize)), rep)
	if want := int64(cfg.conns * cfg.queries); rep.queries != want {
		t.Errorf("%d queries completed, want %d", rep.queries, want)
	}
	// Memory must not grow with the amount of data: what is left after the run (connections
	// and servers closed, GC done) is bounded by a few MiB whatever the volume.
	if growth := int64(rep.heapAfter) - int64(rep.heapBefore); growth > 16<<20 {
		t.Errorf("heap grew by %s over the run (bound 16 MiB)", describe(growth))
	}
	// The goroutines of the connections end with them (goleak checks the rest at exit).
	deadline := time.Now().Add(hangBound)
	for runtime.NumGoroutine() > rep.goroutinesBefore && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > rep.goroutinesBefore {
		t.Errorf("%d goroutines after the run, %d before", n, rep.goroutinesBefore)
	}
}

// TestLoad is the short load run of `make test` (under -race): 8 connections x 20 queries, values
// up to 1 MiB, spread over the load targets (full encryption, full encryption with small
// records, login-only, strict, none).
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load run skipped in -short mode")
	}
	cfg := loadConfig{conns: 8, queries: 20, maxSize: 1 << 20, seed: 1}
	checkLoad(t, cfg, runLoad(t, cfg))
}

// TestSoak is the long load run (64 connections x 200 queries, values up to 4 MiB). It runs
// only with RELIABILITY_SOAK=1; `make soak` runs it under the race detector for correctness and
// again without it for the time and memory figures it logs (-v):
//
//	RELIABILITY_SOAK=1 go test -count=1 -run '^TestSoak$' -timeout 30m -v ./reliability/
func TestSoak(t *testing.T) {
	if os.Getenv("RELIABILITY_SOAK") != "1" {
		t.Skip("set RELIABILITY_SOAK=1 for the soak run")
	}
	cfg := loadConfig{conns: 64, queries: 200, maxSize: 4 << 20, seed: uint64(time.Now().UnixNano())}
	t.Logf("seed %d", cfg.seed)
	checkLoad(t, cfg, runLoad(t, cfg))
}
