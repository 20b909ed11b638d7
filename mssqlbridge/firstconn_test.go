package mssqlbridge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// First-connection measurement (docs/protocol.md, section "crypto/tls facts"): a fresh process creates a connector whose
// connections verify against the system roots, does 300 ms of other start-up work, then
// makes its first connection; we time that connection, with the system pool loaded in the
// background from NewConnector on, and without (the first handshake loads it).
//
// tdstest's certificate is not in the system roots, so the handshake ends with "certificate
// signed by unknown authority" after verifying against the full system pool: the same cost
// path as a successful verification, which cannot be arranged here.
//
// Run: go test -run '^$' -bench FirstConnection -benchtime=1x ./mssqlbridge/

const (
	firstConnEnv     = "MSSQLBRIDGE_FIRSTCONN_DSN"
	firstConnEarly   = "MSSQLBRIDGE_FIRSTCONN_EARLY"
	firstConnStartup = 300 * time.Millisecond
	firstConnRuns    = 9
)

// TestFirstConnHelper is the measured process; it does nothing unless started by
// BenchmarkFirstConnection.
func TestFirstConnHelper(t *testing.T) {
	dsn := os.Getenv(firstConnEnv)
	if dsn == "" {
		t.Skip("helper process for BenchmarkFirstConnection")
	}
	startSystemRootsEarly = os.Getenv(firstConnEarly) == "1"
	c, err := NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(firstConnStartup) // the application's other start-up work
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := c.Connect(ctx)
	elapsed := time.Since(start)
	if err == nil {
		_ = conn.Close()
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("first connection: %v", err)
	}
	fmt.Printf("FIRSTCONN %d\n", elapsed.Nanoseconds())
}

func BenchmarkFirstConnection(b *testing.B) {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	dsn := srv.DSN("encrypt=true") // verify against the system roots
	for b.Loop() {
		for _, arm := range []struct{ name, early string }{{"background", "1"}, {"on-demand", "0"}} {
			var ms []float64
			for range firstConnRuns {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFirstConnHelper$", "-test.count=1")
				cmd.Env = append(os.Environ(), firstConnEnv+"="+dsn, firstConnEarly+"="+arm.early)
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("helper: %v\n%s", err, out)
				}
				_, rest, ok := strings.Cut(string(out), "FIRSTCONN ")
				if !ok {
					b.Fatalf("helper output: %s", out)
				}
				ns, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				ms = append(ms, float64(ns)/1e6)
			}
			slices.Sort(ms)
			b.ReportMetric(ms[len(ms)/2], "ms-median-"+arm.name)
			b.Logf("%s: first connection after %v of start-up, %d fresh processes, ms sorted: %.2f", arm.name, firstConnStartup, len(ms), ms)
		}
	}
}
