// Package integration holds the suites that matter to users of the bridged go-mssqldb connector,
// written once and run against every target a machine offers:
//
//   - the embedded tdstest server, always (configured like a default SQL Server: encryption
//     setting OFF, so that every client mode is allowed);
//   - the server that MSSQL_DSN points at, when it is set;
//   - where a Docker engine answers, two containers started with testcontainers-go: SQL Server
//     2022 (Microsoft's image mcr.microsoft.com/mssql/server:2022-latest, or the one MSSQL_IMAGE
//     names) when the engine has or can pull it, and the embedded server's command in the image
//     of docker/tdstest-server/Dockerfile, built here without a registry (container_test.go).
//
// The suites connect in every encryption mode, fetch 1 MiB nvarchar(max) and varbinary(max) values
// at packet sizes 4096 and 16383, cancel a running query, and check certificate verification
// with TrustServerCertificate and with the server's own certificate. A server that lacks TDS 8.0
// or WAITFOR DELAY skips the cases that need it, by name (capability_test.go).
//
// The package is a module of its own, so that testcontainers-go and the Docker client stay out of
// the module graph of programs that import tdsbridge (scripts/modgraph checks); it has no
// non-test code. Run it with `make integration`; `make test` runs it too.
package integration
