package azureadexample_test

import (
	"database/sql"
	"log"

	"github.com/microsoft/go-mssqldb/azuread"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
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
