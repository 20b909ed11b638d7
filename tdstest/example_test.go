package tdstest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// A test starts a server, connects with go-mssqldb using its own TLS (the server's CA file in
// the "certificate" parameter) and runs a query.
func Example() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open("sqlserver", srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
		log.Fatal(err)
	}
	fmt.Println(one)
	// Output: 1
}

// A server with the OFF setting negotiates login-only encryption with a client that sends OFF
// (go-mssqldb's encrypt=false), and answers nvarchar(max) values of any size.
func Example_loginOnly() {
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open("sqlserver", srv.DSN("encrypt=false", "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var s string
	if err := db.QueryRow("SELECT REPLICATE(CAST(N'ab' AS nvarchar(max)), 3)").Scan(&s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(s)
	// Output: ababab
}

// Faults make the server misbehave on purpose: here the first connection's login fails with
// ERROR 18456 (login failed), the way a reliability test might check error handling.
func Example_faults() {
	srv, err := tdstest.NewServer(tdstest.Config{
		Faults: tdstest.Faults{
			Hook: func(conn int, phase tdstest.Phase) tdstest.Action {
				if phase == tdstest.PhaseLogin && conn == 1 {
					return tdstest.ActionError // the first login fails with 18456
				}
				return tdstest.ActionNone
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open("sqlserver", srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var merr mssql.Error
	err = db.Ping()
	fmt.Println(errors.As(err, &merr), merr.Number)
	fmt.Println(db.Ping()) // the second connection logs in
	// Output:
	// true 18456
	// <nil>
}

// Queries with arguments reach the server as sp_executesql; SeriesQuery and WideRowsQuery give
// many rows, and the same statements run unchanged on SQL Server 2022.
func Example_parameters() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open("sqlserver", srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var n int64
	var s string
	if err := db.QueryRow("SELECT @p1, @p2", int64(42), "forty-two").Scan(&n, &s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, s)

	rows, err := db.Query(tdstest.SeriesQuery, 3) // a Go int travels as bigint
	if err != nil {
		log.Fatal(err)
	}
	var series []int64
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			log.Fatal(err)
		}
		series = append(series, n)
	}
	rows.Close()
	fmt.Println(series)

	var id int
	var name, amount string
	var ts time.Time
	var flag bool
	if err := db.QueryRow(tdstest.WideRowsQuery, 1).Scan(&id, &name, &ts, &amount, &flag); err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, name, ts.Format(time.DateTime), amount, flag)
	// Output:
	// 42 forty-two
	// [1 2 3]
	// 1 name-1 2026-01-01 00:00:01 0.2500 true
}

// A bulk load as go-mssqldb's CopyIn sends it, into a temporary table, inside a transaction. The
// server validates every row and keeps the count and the sum of the first column, which the
// queries below read back. A temporary table belongs to its connection, hence the *sql.Conn.
func Example_bulkLoad() {
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	db, err := sql.Open("sqlserver", srv.DSN("encrypt=true", "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE #t (id bigint NOT NULL, name nvarchar(50) NULL)"); err != nil {
		log.Fatal(err)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, mssql.CopyIn("#t", mssql.BulkOptions{}, "id", "name"))
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 1000; i++ {
		if _, err := stmt.ExecContext(ctx, i, fmt.Sprintf("name-%d", i)); err != nil {
			log.Fatal(err)
		}
	}
	res, err := stmt.ExecContext(ctx) // sends the rows
	if err != nil {
		log.Fatal(err)
	}
	loaded, _ := res.RowsAffected()
	if err := stmt.Close(); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	var count, sum int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT_BIG(*), SUM(CAST(id AS bigint)) FROM #t").Scan(&count, &sum); err != nil {
		log.Fatal(err)
	}
	fmt.Println(loaded, count, sum)
	// Output: 1000 1000 500500
}

// A test that must hold whatever the encryption ranges over Modes: each gives the server setting
// and go-mssqldb's encrypt value of one mode (strict is TDS 8.0, TLS before any TDS byte).
func ExampleModes() {
	for _, m := range tdstest.Modes() {
		srv, err := tdstest.NewServer(m.Config)
		if err != nil {
			log.Fatal(err)
		}
		db, err := sql.Open("sqlserver", srv.DSN("encrypt="+m.Encrypt, "certificate="+srv.CAFile(), "hostnameincertificate=localhost"))
		if err != nil {
			log.Fatal(err)
		}
		var one int
		err = db.QueryRow("SELECT 1").Scan(&one)
		fmt.Println(m.Name, one, err)
		db.Close()
		srv.Close()
	}
	// Output:
	// none 1 <nil>
	// login-only 1 <nil>
	// full 1 <nil>
	// strict 1 <nil>
}
