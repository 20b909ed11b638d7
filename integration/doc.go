// Package integration holds the suites that matter to users of the bridged go-mssqldb connector,
// written once and run against every target a machine offers:
//
//   - the embedded tdstest server, always (configured like a default SQL Server: encryption
//     setting OFF, so that every client mode is allowed);
//   - SQL Server 2022 started with testcontainers-go, when a Docker engine is reachable
//     (Microsoft's image mcr.microsoft.com/mssql/server:2022-latest, or the one MSSQL_IMAGE
//     names);
//   - the server that MSSQL_DSN points at, when it is set.
//
// The suites connect in every encryption mode, fetch 1 MiB nvarchar(max) and varbinary(max) values
// at packet sizes 4096 and 16383, cancel a running query, and check certificate verification
// with TrustServerCertificate and with the server's own certificate. The package has no
// non-test code; run it with `make integration` or `go test ./integration/`.
package integration
