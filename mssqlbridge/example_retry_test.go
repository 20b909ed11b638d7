package mssqlbridge_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// execAtMostOnce runs a statement that must not run twice: it tries again only while
// SafeToRetry says that nothing of the statement reached the server.
func execAtMostOnce(ctx context.Context, db *sql.DB, query string, attempts int) (tried int, err error) {
	for tried = 1; ; tried++ {
		_, err = db.ExecContext(ctx, query)
		if err == nil || tried == attempts || !mssqlbridge.SafeToRetry(err) {
			return tried, err
		}
	}
}

// A connection that fails before its login never carried the statement, so trying again
// is safe (here the server keeps refusing encrypt=true, so every attempt fails the same way);
// an error the server returned for the statement is not safe to retry.
func ExampleSafeToRetry() {
	refusing, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptNotSup})
	if err != nil {
		log.Fatal(err)
	}
	defer refusing.Close()
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	for _, dsn := range []string{refusing.DSN("encrypt=true"), srv.DSN("encrypt=true", "certificate="+srv.CAFile())} {
		db, err := sql.Open(mssqlbridge.DriverName, dsn)
		if err != nil {
			log.Fatal(err)
		}
		tried, err := execAtMostOnce(context.Background(), db, "UPDATE accounts SET balance = balance - 10", 3)
		fmt.Println(tried, mssqlbridge.SafeToRetry(err))
		_ = db.Close()
	}
	// Output:
	// 3 true
	// 1 false
}
