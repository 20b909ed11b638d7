package tdstest

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkQuery1MB measures a go-mssqldb round trip of a 1 MiB nvarchar(max) value (its own
// TLS, full encryption) against the server: client and server share the process, so this is
// the cost of both sides.
func BenchmarkQuery1MB(b *testing.B) {
	for _, size := range []int{4096, 16384} {
		for _, rec := range []int{0, 1024} {
			b.Run("packet="+strconv.Itoa(size)+"/record="+strconv.Itoa(rec), func(b *testing.B) {
				s, err := NewServer(Config{RecordSize: rec})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				db, err := openDB(s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost",
					"packet size="+strconv.Itoa(size)))
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				ctx := context.Background()
				b.SetBytes(1 << 20)
				b.ReportAllocs()
				for b.Loop() {
					var v string
					if err := db.QueryRowContext(ctx, queryBig).Scan(&v); err != nil {
						b.Fatal(err)
					}
					if len(v) != bigLen {
						b.Fatalf("%d characters", len(v))
					}
				}
			})
		}
	}
}

// BenchmarkWorkloads measures go-mssqldb (its own TLS, full encryption) running the statements
// of the contract against the server in the same process: a parameterized round trip, 100,000
// narrow and wide rows, and a CopyIn of 10,000 rows. It is the cost of both sides together.
func BenchmarkWorkloads(b *testing.B) {
	s, err := NewServer(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	db, err := openDB(s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	b.Run("params", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var n int64
			var s string
			if err := db.QueryRowContext(ctx, "SELECT @p1, @p2", int64(42), "forty-two").Scan(&n, &s); err != nil || n != 42 {
				b.Fatal(n, err)
			}
		}
	})
	for _, q := range []struct{ name, sql string }{{"series", SeriesQuery}, {"wide", WideRowsQuery}} {
		b.Run(q.name+"/100000", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, err := db.QueryContext(ctx, q.sql, 100_000)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil || n != 100_000 {
					b.Fatal(n, err)
				}
				_ = rows.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/row")
		})
	}
	b.Run("copyin/10000", func(b *testing.B) {
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "CREATE TABLE #t (id int NOT NULL, name nvarchar(50) NULL, ts datetime2(7) NULL, amount decimal(18,4) NULL, flag bit NULL)"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if n, err := copyRows(ctx, conn, 10_000, false); err != nil || n != 10_000 {
				b.Fatal(n, err)
			}
		}
	})
}
