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
