package azureadexample_test

import (
	"database/sql"
	"fmt"
	"log"
	"net/url"

	"github.com/microsoft/go-mssqldb/azuread"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// azuread.NewConnector takes a DSN string: give it mssqlbridge.DriverDSN(dsn), the same DSN
// with the driver's own encryption off, and give the Dialer the DSN itself, whose encrypt,
// certificate and hostNameInCertificate settings the bridge applies. The token is fetched by
// azuread (here with the default credential chain) and sent inside the bridge's TLS. Not run:
// it needs an Azure SQL server and an Entra ID identity.
func Example() {
	dsn := "sqlserver://myserver.database.windows.net?database=shop&encrypt=true&fedauth=ActiveDirectoryDefault"

	d, err := mssqlbridge.NewDialer(dsn)
	if err != nil {
		log.Fatal(err)
	}
	drv, err := mssqlbridge.DriverDSN(dsn)
	if err != nil {
		log.Fatal(err)
	}
	c, err := azuread.NewConnector(drv)
	if err != nil {
		log.Fatal(err)
	}
	c.Dialer = d
	db := sql.OpenDB(c)
	defer db.Close()
	if err := db.Ping(); err != nil {
		log.Fatal(err)
	}
}

// The same with the DSN form that carries an access token (fedauth=
// ActiveDirectoryServicePrincipalAccessToken, the token in password), run against the
// embedded test server, which takes that token: the token travels inside the bridge's TLS.
func Example_accessToken() {
	const token = "eyJ0eXAiOiJKV1QifQ.access-token"
	srv, err := tdstest.NewServer(tdstest.Config{FedAuthToken: token})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	dsn := "sqlserver://" + srv.Addr + "?encrypt=true&certificate=" + url.QueryEscape(srv.CAFile()) +
		"&fedauth=ActiveDirectoryServicePrincipalAccessToken&password=" + url.QueryEscape(token)

	d, err := mssqlbridge.NewDialer(dsn)
	if err != nil {
		log.Fatal(err)
	}
	drv, err := mssqlbridge.DriverDSN(dsn)
	if err != nil {
		log.Fatal(err)
	}
	c, err := azuread.NewConnector(drv)
	if err != nil {
		log.Fatal(err)
	}
	c.Dialer = d
	db := sql.OpenDB(c)
	defer db.Close()
	fmt.Println(db.Ping())
	// Output: <nil>
}
