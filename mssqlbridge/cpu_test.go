package mssqlbridge

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/internal/cputime"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// Client CPU per MiB, bridged versus go-mssqldb's own transport, with the server in another
// process (so that this process's CPU time, internal/cputime, counts
// the client only):
//
//	go test -run '^$' -bench ClientCPU -benchtime=40x ./mssqlbridge/
//
// Each iteration reads one 1 MiB varbinary(max) value; the metric is the process's user+system
// CPU time per MiB. The bench program (make bench) is the reference measurement; this one checks
// the package's read path in isolation.

const serverHelperEnv = "MSSQLBRIDGE_SERVER_HELPER"

// TestServerHelper runs a tdstest server for BenchmarkClientCPU in a separate process: it
// prints the server's DSN and CA file, then serves until stdin closes.
func TestServerHelper(t *testing.T) {
	mode := os.Getenv(serverHelperEnv)
	if mode == "" {
		t.Skip("helper process for BenchmarkClientCPU")
	}
	cfg := tdstest.Config{}
	if mode == "plaintext" {
		cfg.Encryption = tdstest.EncryptNotSup
	}
	srv, err := tdstest.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Printf("SERVER %s %s\n", srv.DSN(), srv.CAFile())
	signal.Ignore(syscall.SIGPIPE)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
}

func BenchmarkClientCPU(b *testing.B) {
	for _, tr := range []struct{ name, encrypt string }{{"tls", "true"}, {"plaintext", "disable"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServerHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), serverHelperEnv+"="+tr.name)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		f := strings.Fields(line)
		if err != nil || len(f) != 3 || f[0] != "SERVER" {
			b.Fatalf("server helper: %q, %v", line, err)
		}
		dsn, caFile := f[1], f[2]
		for _, ps := range []int{4096, 16383} {
			for _, arm := range []string{"native", "bridged"} {
				b.Run(fmt.Sprintf("%s/%d/%s", tr.name, ps, arm), func(b *testing.B) {
					full := fmt.Sprintf("%s?encrypt=%s&certificate=%s&packet+size=%d", dsn, tr.encrypt, caFile, ps)
					counter := &countingDialer{}
					var db *sql.DB
					if arm == "native" {
						c, err := mssql.NewConnector(full)
						if err != nil {
							b.Fatal(err)
						}
						c.Dialer = counter
						db = openDB(b, c)
					} else {
						var err error
						if db, err = bridgedDB(b, full, WithDialer(counter)); err != nil {
							b.Fatal(err)
						}
					}
					db.SetMaxOpenConns(1)
					const q = "SELECT CAST(REPLICATE(CAST('abcdefgh' AS varchar(max)), 131072) AS varbinary(max))"
					ctx := context.Background()
					var v []byte
					if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil || len(v) != 1<<20 {
						b.Fatalf("warm-up: %d bytes, %v", len(v), err)
					}
					before, err := cputime.Process()
					if err != nil {
						b.Fatal(err)
					}
					reads := counter.reads.Load()
					for b.Loop() {
						if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
							b.Fatal(err)
						}
					}
					after, err := cputime.Process()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64((after-before).Microseconds())/1000/float64(b.N), "cpu-ms/MiB")
					b.ReportMetric(float64(counter.reads.Load()-reads)/float64(b.N), "socket-reads/MiB")
					b.SetBytes(1 << 20)
				})
			}
		}
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatalf("server helper: %v", err)
		}
	}
}

// countingDialer dials through base (a net.Dialer when nil) and counts the Read and Write calls
// on the sockets it returns.
type countingDialer struct {
	base interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
	reads, writes atomic.Int64
}

func (c *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	base := c.base
	if base == nil {
		base = &net.Dialer{}
	}
	conn, err := base.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, d: c}, nil
}

type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.d.reads.Add(1)
	return c.Conn.Read(p)
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.d.writes.Add(1)
	return c.Conn.Write(p)
}
