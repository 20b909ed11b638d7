// Package tdstest provides an embedded TDS server for tests, in the style of net/http/httptest.
//
// A [Server] listens on a loopback port and speaks enough of the TDS protocol (MS-TDS) for SQL Server
// clients to connect, log in and run a fixed set of statements (below). The same text gives the
// same values on a real SQL Server 2022. Generated values and many-row results are streamed: the
// server holds a few KiB of them at a time, so tests may ask for many MiB (a parameter echoed back
// is held whole, like the request that carried it).
//
// # What tdstest understands
//
// Keywords and identifiers are case-insensitive; whitespace and comments are free. A request may
// be a SQL batch (packet type 0x01) or an RPC (0x03) calling sp_executesql, by ProcID 10 or by
// name, whose statement may use the parameters declared in its @params (named or positional).
// The prepared-statement procedures of ODBC drivers are answered too: sp_prepexec (ProcID 13:
// @handle int OUTPUT, @params, @stmt, values) runs its statement and returns the handle in a
// RETURNVALUE token after RETURNSTATUS, sp_execute (12: @handle, values) runs it again,
// sp_unprepare (15) forgets it; an unknown handle gets SQL Server's error 8179. @stmt and @params
// may be ntext, nchar or nvarchar, as SQL Server takes them.
// Parameters may be of these types, NULL included: bit, tinyint, smallint, int, bigint (INTN or
// the fixed types), decimal/numeric, real/float, money, datetime, nvarchar/varchar/nchar/char
// including (max) (PLP), varbinary/binary including (max), date, time, datetime2,
// datetimeoffset, uniqueidentifier, and the legacy TYPE_INFO forms of MS-TDS 2.2.5.4 that drivers
// still send: text, ntext and image (LONGLEN, the value a 4-byte length and the data), and the
// BYTELEN CHARTYPE, VARCHARTYPE, BINARYTYPE, VARBINARYTYPE, DECIMALTYPE and NUMERICTYPE (echoed
// as their BIG, N or ...N types, as SQL Server returns such variables); go-mssqldb's nil
// (NULLTYPE) takes the type declared in @params. Statements, several per request allowed, each
// with its own result or DONE, run in order against the connection's session: each sees what the
// ones before it did, in the same request too (USE, SET, transactions, temporary tables,
// @@ROWCOUNT, @@ERROR):
//
//   - SELECT <item>, ...: one row. An item is an integer literal, N'<text>', a parameter @name
//     (returned as sent: its TYPE_INFO, nullable, and its value byte for byte, text, ntext and
//     image with the text pointer and timestamp of a ROW; column names empty, as SQL Server
//     gives them), DATALENGTH(@name) (bigint for (max) types, int otherwise, NULL for NULL),
//     one of the system variables and functions listed below,
//     SERVERPROPERTY('<name>') (sql_variant: ProductVersion '16.0.1000.6' as LOGINACK and
//     @@VERSION say, ProductMajorVersion, ProductMinorVersion, ProductBuild, ProductLevel 'RTM',
//     Edition 'Developer Edition (64-bit)', EngineEdition int 3, ServerName, MachineName,
//     Collation, IsClustered and similar int 0; NULL for any other name, as SQL Server answers
//     an unknown property), CAST(SERVERPROPERTY('<name>') AS int | sysname | varchar[(n)] |
//     nvarchar[(n)]),
//     REPLICATE(CAST(N'<s>' AS nvarchar(max)), <n>) or
//     CAST(REPLICATE(CAST('<s>' AS varchar(max)), <n>) AS varbinary(max)); an item may have an
//     alias ([AS] name).
//   - [SeriesQuery], SELECT value FROM GENERATE_SERIES(start, stop): the bigint rows start..stop
//     (counting down when stop < start), where start and stop are CAST(<integer> AS bigint) or
//     bigint parameters. Bounds of different types get SQL Server's error 5373; other types,
//     NULL bounds, a step, and more than 10,000,000 rows get a clear error.
//   - [WideRowsQuery]: the same series as wide rows (id int, name nvarchar(50), ts datetime2(7),
//     amount decimal(18,4), flag bit, all nullable as CASTs are in SQL Server's metadata).
//   - CREATE TABLE #name (column type [NULL | NOT NULL], ...) with the parameter types above
//     but text, ntext and image,
//     DROP TABLE [IF EXISTS] #name, and bulk load into it as go-mssqldb's CopyIn does it:
//     SET FMTONLY ON, SELECT * FROM #name (COLMETADATA only), SET FMTONLY OFF, INSERT BULK #name
//     (column type, ...) [WITH (...)], then a BULK_LOAD message (0x07: COLMETADATA, ROW tokens,
//     DONE). Every row is validated against the column types (lengths, NULL in NOT NULL columns,
//     decimal digits, date and time ranges); a bad row fails the whole load with an ERROR that
//     names the row, the column and the offset, and leaves the table as it was. A good load is
//     answered with a DONE carrying its row count. Temporary tables belong to their connection
//     and end with it or with a RESETCONNECTION.
//   - SELECT COUNT(*) FROM #name (int) and SELECT COUNT_BIG(*), SUM(CAST(<col> AS bigint)) FROM
//     #name (bigint, bigint; SUM is NULL when no row has a value), where <col> is the table's
//     first column and an integer. The server keeps no rows: only the row count and the sum of
//     that column, so that a load of any size takes constant memory.
//   - SET NOCOUNT ON|OFF (DONE tokens lose or regain their row count), SET FMTONLY ON|OFF
//     (results carry metadata only), any other SET statement (accepted, no effect), USE <db>.
//   - BEGIN TRAN[SACTION], COMMIT [TRAN[SACTION]|WORK], ROLLBACK [...], and the transaction
//     manager requests of database/sql drivers (begin, commit, rollback), answered with the
//     ENVCHANGE tokens 8, 9 and 10. A BEGIN inside a transaction nests (@@TRANCOUNT 2, ...), a
//     COMMIT leaves one level, and the outermost COMMIT or any ROLLBACK ends the transaction. A request whose ALL_HEADERS names another transaction than the
//     open one is refused.
//   - WAITFOR DELAY 'hh:mm[:ss[.fff]]'.
//   - [EXEC] sp_datatype_info_100 <ODBC type> [, <ODBC version>] (and sp_datatype_info), which ODBC
//     drivers send for SQLGetTypeInfo: SQL Server's rows, with all its columns, for bigint, varbinary,
//     nvarchar, sysname, int, varchar, datetime, smalldatetime and datetime2 (ODBC types -5, -3,
//     -9, 4, 12, 93; 0 for all), as a procedure's result (DONEINPROC, RETURNSTATUS, DONEPROC).
//     pyodbc sizes its parameters by this answer.
//
// # System variables and functions
//
// A select list may read these @@ variables and system functions, with the types SQL Server gives
// them. Each is computed from the session when its statement runs, so that, for example,
// BEGIN TRAN; SELECT @@TRANCOUNT gives 1 and USE tempdb; SELECT DB_NAME() gives tempdb:
//
//   - @@SPID smallint: the SPID of the packet headers
//   - @@TRANCOUNT int: the nesting of open transactions (BEGIN TRAN adds one, COMMIT removes one, ROLLBACK ends all)
//   - @@ROWCOUNT int: the rows the previous statement returned or loaded (1 for a list of values), 0 after one that returns none or failed
//   - @@ERROR int: the number of the error the previous statement failed with, 0 after a success
//   - @@MICROSOFTVERSION int: 16.0.1000 encoded as SQL Server does
//   - @@MAX_PRECISION tinyint: 38
//   - @@DATEFIRST tinyint: 7
//   - @@LANGID smallint: 0
//   - @@LOCK_TIMEOUT int: -1
//   - @@VERSION nvarchar(300): the server's version text, with ProductVersion
//   - @@SERVERNAME sysname: 'TDSTEST'
//   - @@SERVICENAME sysname: 'MSSQLSERVER'
//   - @@LANGUAGE sysname: 'us_english'
//   - DB_NAME() sysname: the current database, as the login and USE set it
//   - SUSER_SNAME() sysname: the login's user name
//   - SUSER_NAME() sysname: the login's user name
//   - SYSTEM_USER sysname: the login's user name
//   - USER_NAME() sysname: 'dbo'
//   - SCHEMA_NAME() sysname: 'dbo'
//   - CURRENT_USER sysname: 'dbo'
//   - SESSION_USER sysname: 'dbo'
//   - USER sysname: 'dbo'
//   - HOST_NAME() sysname: LOGIN7's HostName
//   - APP_NAME() sysname: LOGIN7's AppName
//
// A request other than a bulk load is at most 4 MiB; a bulk load is decoded as it arrives, in
// constant memory. A result streams to its end: an ATTENTION that arrives meanwhile is answered
// after it (WAITFOR DELAY is the exception, it ends at once).
//
// Any other statement, procedure or request gets an ERROR token (SQL Server's number where
// tdstest mimics its check, such as 137 for an undeclared variable or 208 for a missing table,
// otherwise 50000, class 16) whose message names what was refused; the connection stays usable.
// An ATTENTION packet gets a DONE token with the attention bit.
//
// # Encryption
//
// The PRELOGIN ENCRYPTION negotiation follows the table in MS-TDS 2.2.6.5 for a server setting of
// ON (EncryptOn, the default), OFF (EncryptOff) or NOT_SUP (EncryptNotSup), Config.Encryption. The resulting
// modes:
//
//   - full: the TLS handshake travels inside PRELOGIN packets (TLS 1.2 at most, like SQL Server),
//     then every TDS packet is TLS application data;
//   - login-only: exactly the first packet of LOGIN7 arrives inside TLS, everything else is
//     plaintext in both directions;
//   - none: plaintext throughout;
//   - strict (TDS 8.0, EncryptStrict): TLS directly on TCP before any TDS byte, ALPN "tds/8.0",
//     TLS 1.3 allowed. A connection whose first byte is 0x16 (a TLS handshake record) is always
//     treated as strict unless the server is set to NOT_SUP.
//
// Modes lists the four, each with a server setting and go-mssqldb's encrypt value that reach it,
// for tests that must hold in every mode.
//
// The TLS side of the handshake runs over a [bridge.Conn] in the server role. The server writes one
// TLS record per TDS packet (DynamicRecordSizingDisabled and one Write per packet), as SQL Server
// does, unless Config.RecordSize asks for records of exactly N bytes regardless of packet
// boundaries (the last record of each message carries the remainder).
//
// # Login
//
// LOGIN7 is parsed and validated (every offset and length is checked against the message). The
// user name and password must match Config.User and Config.Password; otherwise the server answers
// with ERROR 18456 ("Login failed for user ...") and closes the connection. The requested packet
// size is honoured within 512..32767 (at most 16383 on an encrypted connection) and confirmed with
// an ENVCHANGE token; the login response itself travels in packets of the handshake size (4096).
//
// TDS versions 7.0 through 7.4 and 8.0 are accepted. LOGINACK carries the client's version in the
// server-to-client form of MS-TDS 2.2.7.14 (7.0: 0x07000000, 7.1: 0x07010000, 7.1 revision 1:
// 0x71000001; 7.2 and later as sent; 7.4 for TDS 8.0). TDS 7.0 and 7.1 connections get the token
// layout of those versions (16-bit UserType, 32-bit DONE row counts and line numbers, batches
// without ALL_HEADERS, no collation at 7.0) and SQL batches only: RPC and transaction manager
// requests need TDS 7.2 and get an ERROR. A (max) column reaches them as SQL Server sends it
// (MS-TDS 2.2.5.4.3): nvarchar(max) as ntext, varchar(max) as text, varbinary(max) as image.
//
// MS-TDS 3.3.5.1 expects PRELOGIN (or a TLS ClientHello) as the first message; legacy clients
// (FreeTDS with tds version 7.0, for example) send LOGIN7 first, and SQL Server accepts them. Such a client cannot negotiate encryption, so
// the server treats it as one whose PRELOGIN says NOT_SUP (the table of MS-TDS 2.2.6.5): with the
// setting OFF or NOT_SUP the login proceeds without encryption; with ON, which requires
// encryption, the server answers with ERROR 18456 naming the reason and closes the connection. A
// strict (TDS 8.0) server refuses anything but TLS.
//
// # Faults
//
// Config.Faults makes the server misbehave on purpose at a chosen phase: close the connection,
// stall, send a packet of the wrong type or with a bad length, or answer PRELOGIN with NOT_SUP to
// strip encryption. See [Faults].
//
// # Running it standalone
//
// The command tdstest/cmd/tdstest-server runs a Server on a fixed loopback address (Config.Addr)
// and prints its address, a go-mssqldb DSN and the CA file:
//
//	go run ./tdstest/cmd/tdstest-server -addr 127.0.0.1:14330 -encrypt on|off|notsup|strict -user U -password P
//
// # Independent clients
//
// The package's tests run real clients against the server besides go-mssqldb (with its own TLS
// and bridged through mssqlbridge): FreeTDS tsql (Debian freetds-bin), tedious (npm),
// pytds (Debian python3-tds, python3-openssl), pyodbc over FreeTDS's ODBC
// driver (Debian python3-pyodbc, tdsodbc, unixodbc; the driver named by path and configured by a
// freetds.conf of the test's own, so no system file is touched) and jTDS 1.3.1 (Debian
// libjtds-java) under Java 17 at TDS 7.1, which reads the (max) types as ntext and image and
// runs a transaction within one batch. Besides queries, typed
// parameters and many-row results, tedious and pytds upload a 1 MiB varbinary(max) parameter and
// bulk load a temporary table with their own encoders (tedious inside a transaction begun and
// committed with transaction manager requests); pyodbc uploads 1 MiB through sp_prepexec and
// commits the transaction FreeTDS keeps open with autocommit off; go-mssqldb's CopyIn is proven
// in its own tests. The README has the table of clients and encryption modes.
// A missing client skips its suite with a message naming the client and how to install it; with
// the environment variable TDSBRIDGE_REQUIRE_CLIENTS=1 a missing client fails the test instead,
// so that a run cannot pass without those proofs.
//
// # Errors and shutdown
//
// Bad input from a client is logged through Config.Logf and closes that connection; it never
// panics (a panic in a connection goroutine is recovered and logged as a last resort). Close stops
// the listener, closes every connection and returns only when every goroutine of the server has
// ended.
package tdstest

// SeriesQuery returns the bigint rows 1..@p1 (@p1 a bigint parameter: go-mssqldb sends a Go int
// or int64 as bigint), one column named value. SQL Server 2022 runs it the same way.
const SeriesQuery = "SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)"

// WideRowsQuery returns @p1 wide rows computed from GENERATE_SERIES: id int, name nvarchar(50),
// ts datetime2(7), amount decimal(18,4), flag bit (row 1: 1, name-1, 2026-01-01 00:00:01,
// 0.2500, 1). SQL Server 2022 runs it the same way.
const WideRowsQuery = "SELECT CAST(value AS int) AS id, CAST(CONCAT(N'name-', value) AS nvarchar(50)) AS name, " +
	"DATEADD(SECOND, CAST(value AS int), CAST('2026-01-01T00:00:00' AS datetime2(7))) AS ts, " +
	"CAST(value / 4.0 AS decimal(18,4)) AS amount, CAST(value % 2 AS bit) AS flag " +
	"FROM GENERATE_SERIES(CAST(1 AS bigint), @p1)"
