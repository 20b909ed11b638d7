package mssqlbridge

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

func init() {
	// Registration allocates nothing else: certificate pools load only when a connector
	// that needs them is created.
	sql.Register(DriverName, sqlDriver{})
}

// sqlDriver is the database/sql driver registered as DriverName.
type sqlDriver struct{}

// Open opens one connection (database/sql uses OpenConnector instead).
func (sqlDriver) Open(dsn string) (driver.Conn, error) {
	c, err := NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses dsn once for a *sql.DB, as go-mssqldb's "sqlserver" driver does.
func (sqlDriver) OpenConnector(dsn string) (driver.Connector, error) {
	return NewConnector(dsn)
}
