package main

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// TestServe runs -serve on a free loopback port for each encryption setting, connects with
// go-mssqldb through the printed DSN (verifying the certificate with the printed
// CA file where TLS is on) and runs SELECT 1; then stops the server with the context.
func TestServe(t *testing.T) {
	for _, enc := range []string{"on", "off", "notsup", "strict"} {
		t.Run(enc, func(t *testing.T) {
			cfg := &config{addr: "127.0.0.1:0", encrypt: enc, user: "bench", password: "Bench-Passw0rd"}
			ctx, cancel := context.WithCancel(context.Background())
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := runServe(ctx, cfg, pw, io.Discard)
				_ = pw.CloseWithError(io.EOF)
				done <- err
			}()
			defer func() {
				cancel()
				go func() { _, _ = io.Copy(io.Discard, pr) }()
				if err := <-done; err != nil {
					t.Errorf("runServe: %v", err)
				}
			}()
			var dsn string
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "DSN: "); ok {
					dsn = d
					break
				}
			}
			if dsn == "" {
				t.Fatalf("no DSN line: %v", sc.Err())
			}
			if !strings.Contains(dsn, "bench:Bench-Passw0rd@127.0.0.1:") {
				t.Errorf("DSN %q: want the user, password and the listening address", dsn)
			}
			c, err := mssql.NewConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			db := sql.OpenDB(c)
			defer db.Close()
			qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
			defer qcancel()
			var one int
			if err := db.QueryRowContext(qctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1 through %s = %d, %v", dsn, one, err)
			}
		})
	}
}
