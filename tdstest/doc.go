// Package tdstest provides an embedded TDS server for tests, in the style of net/http/httptest.
//
// A Server listens on a loopback port and speaks enough of the TDS protocol (MS-TDS) for SQL Server
// clients to connect, log in and run a small fixed set of queries:
//
//   - SELECT 1 (and SELECT of any integer literal, N'<text>', @@SPID, @@VERSION, @@SERVERNAME,
//     @@TRANCOUNT, DB_NAME())
//   - SELECT REPLICATE(CAST(N'<s>' AS nvarchar(max)), <n>): an nvarchar(max) value
//   - SELECT CAST(REPLICATE(CAST('<s>' AS varchar(max)), <n>) AS varbinary(max)): a varbinary(max) value
//   - SET statements and USE <database>, which clients send on connect
//
// The same text gives the same values on a real SQL Server. Large values are streamed: the server
// never holds more than a few KiB of a value in memory, so tests may ask for many MiB. Any other
// statement gets an ERROR token (number 50000, class 16) whose message names the statement; the
// connection stays usable. An ATTENTION packet gets a DONE token with the attention bit.
//
// # Encryption
//
// The PRELOGIN ENCRYPTION negotiation follows the table in MS-TDS 2.2.6.5 for a server setting of
// ON (the default), OFF (Config.EncryptionOff) or NOT_SUP (Config.Encryption). The resulting
// modes:
//
//   - full: the TLS handshake travels inside PRELOGIN packets (TLS 1.2 at most, like SQL Server),
//     then every TDS packet is TLS application data;
//   - login-only: exactly the first packet of LOGIN7 arrives inside TLS, everything else is
//     plaintext in both directions;
//   - none: plaintext throughout;
//   - strict (TDS 8.0, Config.Strict): TLS directly on TCP before any TDS byte, ALPN "tds/8.0",
//     TLS 1.3 allowed. A connection whose first byte is 0x16 (a TLS handshake record) is always
//     treated as strict unless the server is set to NOT_SUP.
//
// The TLS side of the handshake runs over a bridge.Conn in the server role. The server writes one
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
// # Faults
//
// Config.Faults makes the server misbehave on purpose at a chosen phase: close the connection,
// stall, send a packet of the wrong type or with a bad length, or answer PRELOGIN with NOT_SUP to
// strip encryption. See Faults.
//
// # Running it standalone
//
// The command tdstest/cmd/tdstest-server runs a Server on a fixed loopback address (Config.Addr)
// and prints its address, a go-mssqldb DSN and the CA file:
//
//	go run ./tdstest/cmd/tdstest-server -addr 127.0.0.1:14330 -encrypt on|off|notsup|strict -user U -password P
//
// # Errors and shutdown
//
// Bad input from a client is logged through Config.Logf and closes that connection; it never
// panics (a panic in a connection goroutine is recovered and logged as a last resort). Close stops
// the listener, closes every connection and returns only when every goroutine of the server has
// ended.
package tdstest
