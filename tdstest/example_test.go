package tdstest_test

import (
	"database/sql"
	"fmt"
	"log"

	_ "github.com/microsoft/go-mssqldb"

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
	srv, err := tdstest.NewServer(tdstest.Config{EncryptionOff: true})
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
