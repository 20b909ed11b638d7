// Package mssqlbridge plugs the tdsbridge TLS transport into go-mssqldb
// (github.com/microsoft/go-mssqldb): the same DSNs, the same driver, with the TLS handshake,
// the negotiation and the record layer done by the bridge.
//
// # The one-line switch
//
//	import _ "github.com/tdsbridge/tdsbridge/mssqlbridge"
//	db, err := sql.Open("tdsbridge", dsn) // was sql.Open("sqlserver", dsn)
//
// or, with a connector:
//
//	c, err := mssqlbridge.NewConnector(dsn) // was mssql.NewConnector(dsn)
//	db := sql.OpenDB(c)
//
// # Connectors built elsewhere
//
// A connector made by go-mssqldb or another package (mssql.NewSecurityTokenConnector,
// azuread.NewConnector, Kerberos or NTLM from the DSN) takes the bridge through a [Dialer],
// set as its Dialer, with the driver's own encryption off ([Dialer.DriverConfig], [DriverDSN]).
// A connector whose own encryption was left on is refused with [ErrDriverEncryption] before
// any byte reaches the server. Routing (ENVCHANGE type 20, Azure SQL's redirect policy and
// read-only routing) is followed as go-mssqldb follows it: the driver dials the routed host
// through the same dialer, and its certificate is checked against that host's name unless
// hostNameInCertificate (or a ServerName of the caller's) fixes the name.
//
// # How it works
//
// The connector is a go-mssqldb *mssql.Connector built from the user's DSN, with two changes:
// go-mssqldb's own encryption is set to disable, so that it sends ENCRYPTION=NOT_SUP and talks
// plaintext TDS, and its Dialer is this package's HostDialer, which receives the host name
// unresolved (for DNS and the certificate check) and returns a conn that does the rest:
//
//  1. On the driver's first Write, its PRELOGIN packet, the conn sets the ENCRYPTION byte to
//     the user's value (disable: NOT_SUP, false: OFF, true: ON), sends it, reads the server's
//     reply with exact reads, and decides per the negotiation table (prelogin.ClientOutcome).
//     A refusal is an error from that Write, and the conn refuses every later Write: no LOGIN7
//     byte can leave. For TLS it runs tls.Client over a bridge.Conn (TLS inside PRELOGIN
//     packets, version capped at 1.2) and switches the bridge to passthrough. The driver then
//     reads the server's reply with ENCRYPTION set to NOT_SUP.
//  2. Full encryption: every driver Write (one TDS packet) is one tls.Conn Write (one record).
//     Login-only (encrypt=false against a server whose setting is OFF): the first LOGIN7
//     packet through TLS, then plaintext both ways; a LOGIN7 the driver split into several
//     packets is collected and re-framed with a first packet of the driver's packet size, at
//     least 4096 bytes, and sent only if every secret (password, new password, FEDAUTH token)
//     lies in that TLS packet; otherwise it is refused with ErrSecretOutsideTLS and not one
//     byte of it leaves. So is a login whose FEDAUTH token would
//     follow LOGIN7 in a message of its own, which would be plaintext. No encryption:
//     plaintext through the bridge's plaintext mode.
//  3. Reads: the driver reads every packet as an 8-byte header and then its body. The conn
//     passes each Read straight to the tls.Conn (full encryption, strict) or to the bridge in
//     plaintext mode, without a buffer of its own. The bridge reads the socket through a
//     pooled 64 KiB read-ahead buffer and hands crypto/tls complete application-data records
//     several per read ([bridge.Conn.CoalesceRecords]): about one read system call per 20-60 KiB, and
//     one copy more than go-mssqldb's own path (socket, read-ahead, crypto/tls, driver).
//  4. Strict (encrypt=strict, TDS 8.0): the TLS handshake runs on the socket at dial time (ALPN
//     "tds/8.0", TLS 1.3 allowed); the driver's PRELOGIN, with ENCRYPTION set to go-mssqldb's
//     strict value, and everything after it travel inside TLS. The first LOGIN7 packet's TDS
//     version is set to 8.0, as go-mssqldb's own strict mode sends it.
//
// State diagram of a conn:
//
//	new ──PRELOGIN exchanged──┬─> full
//	 │                        ├─> login-only ──first LOGIN7 packet sent──> plain
//	 │                        └─> plain
//	 └──refused──> failed              (any state) ──Close──> closed
//
// # Certificates
//
// Connections verify the server's certificate as go-mssqldb does: against the DSN's
// certificate file when given, else the system roots; byte for byte against the DSN's
// serverCertificate file (no chain or name check); not at all with
// TrustServerCertificate=true (go-mssqldb's default when encrypt is absent);
// hostNameInCertificate replaces the host name in the check. A ServerName set in the
// TLSConfig given to [NewConnectorConfig] is used as given; [WithTLSConfig] replaces every DSN
// setting, and the DSN's files are then not read. No pool is loaded at package
// initialization. [NewConnector] starts loading the file and, if its connections will verify
// against the system roots, the system pool, each in a background goroutine, so that the cost
// overlaps the application's start-up. A
// handshake that needs a pool still loading waits for it; a file that cannot be loaded fails
// each connection that needs it with a [*CertificateFileError] naming the file. Nothing is
// loaded for encrypt=disable.
//
// # Errors
//
// Refusals are clear, wrapped errors, tested with errors.Is: [ErrServerNoEncryption] (the server
// does not support encryption but encrypt=true), [ErrServerRequiresEncryption] (the server
// requires encryption but encrypt=disable), [ErrCertificate] (a [*CertificateError] naming the host
// and wrapping the cause: x509, a serverCertificate mismatch, or a verification callback's
// error), [ErrCertificateFile], [ErrMalformedReply] (saying what was wrong), [ErrSecretOutsideTLS]
// (login-only: a LOGIN7 secret would lie past the encrypted first packet).
// go-mssqldb returns them unchanged from Connect, db.Ping and the first query.
//
// A failed TLS handshake is diagnosed, with the facts and the remedy in the
// message, as a type for errors.As that keeps the crypto/tls or x509 cause reachable:
// [*TLSVersionError] (no version in common: a server offering only TLS 1.0/1.1, which tlsmin=1.0
// allows at the cost of deprecated protocols, or only TLS 1.3, above the bridge's TLS 1.2 cap
// inside PRELOGIN, which tlsmin=1.3 or encrypt=strict lifts), [*TDS8UnsupportedError]
// (encrypt=strict, and the server closed without answering the ClientHello: it may not speak
// TDS 8.0), [*CipherSuiteError] (handshake_failure, most likely no suite in
// common: older servers speak only RSA key exchange, see [WithRSAKeyExchange]),
// [*HostnameMismatchError] (the certificate's names, the name checked, whether the host came from
// a routing redirect), [*UnknownAuthorityError] (subject and issuer; certificate= or
// TrustServerCertificate), [*CertificateValidityError] (NotBefore/NotAfter against now), and
// [*CertificateParseError] (a certificate crypto/tls cannot parse; a negative serial number needs
// the process-wide GODEBUG x509negativeserial=1). The four certificate diagnoses wrap the
// *CertificateError and match ErrCertificate.
//
// WithRSAKeyExchange (or rsakeyexchange=true in the DSN) lets one connector's connections use
// RSA key exchange suites, listed in their own tls.Config.CipherSuites, instead of the
// process-wide GODEBUG tlsrsakex=1. Off by default: RSA key exchange has no forward secrecy.
//
// Every failure of a connection attempt is a [*ConnectError] wrapping them: it names the host
// dialed, the address, the phase that failed ([ConnectPhase]: lookup, TCP connect, PRELOGIN,
// TLS handshake, LOGIN7 send), the time bound that ended it, if one did (the context's
// deadline, the dial timeout or the connection timeout: each bounds every phase, whichever
// ends first), and how long each phase took, for example
//
//	mssqlbridge: connect db.example.com:1433 (10.0.0.5): TLS handshake: no answer within 2s, the context deadline (encrypt=true, PRELOGIN ENCRYPTION sent ON, answered ON; lookup 1.0ms, tcp 0.4ms, prelogin 0.8ms)
//
// errors.Is and errors.As see through it to the sentinels and types above, the net.Error or
// x509 error beneath, and context.DeadlineExceeded whenever a time bound ended the attempt.
// A reply that is not TDS (an HTTP server on the port) says the peer is not a SQL Server and
// shows the start of the reply; an encryption refusal says what the server answered and what
// to change. go-mssqldb prefixes a dial error (not a PRELOGIN or handshake one) with "unable
// to open tcp connection with host" when the DSN's host is an IP address.
//
// # Logging
//
// [WithLogger] gives connections an [*slog.Logger]: one event per phase of each attempt (host,
// address, duration, the encryption values and mode, the TLS version and cipher suite), one
// per failed attempt, per routing redirect followed and per idle connection found dead. No
// event carries a password, token or key. Without the option nothing is logged and a phase
// costs a nil check.
//
// # Differences from go-mssqldb's own TLS
//
//   - TLS inside PRELOGIN is capped at version 1.2 (SQL Server uses 1.3 only with TDS 8.0), as
//     tedious does, unless tlsmin=1.3 asks for 1.3 (full encryption only: login-only stays at
//     1.2). go-mssqldb does not cap it.
//   - With encryption and a packet size below 4096, go-mssqldb's own handshake fails ("invalid
//     packet size"); the bridge's handshake does not depend on the packet size.
//   - The dial timeout (and the context given to Connect) also bounds the PRELOGIN exchange
//     and the TLS handshake; go-mssqldb's own exchange waits without limit unless a connection
//     timeout is set.
//   - Integrated authentication gets channel bindings (EPA) from the bridged TLS only through a
//     provider registered with [RegisterChannelBindingProvider] (see
//     docs/channel-binding.md); with go-mssqldb's providers used directly it sends none.
//   - Only the TCP protocol is supported (named pipes and shared memory would bypass the
//     bridge). Names are resolved by the bridge's dialer (it is a HostDialer); with
//     MultiSubnetFailover (go-mssqldb's default) every address is dialed at once, as
//     go-mssqldb does. The Kerberos SPN, when the DSN gives none, is derived as go-mssqldb
//     derives it.
//   - A malformed certificate in a .pem file is an error; msdsn skips it silently.
//   - A failover partner's certificate is checked against the partner's name (the host
//     dialed), as a routed host's is; go-mssqldb's own TLS checks it against the primary's
//     name. hostNameInCertificate fixes the name for both.
//
// # Dead connections
//
// A pooled connection the server closed while it sat idle fails the next request before any
// byte of it is sent, with a [*DeadConnectionError] that go-mssqldb takes for a bad connection,
// so database/sql runs the request on a new connection. A connection counts as dead only when
// the server closed or reset it (seen with poll's POLLRDHUP on Linux and FreeBSD even behind
// unread bytes, such as a TLS close_notify or a session ticket; with a non-blocking peek on
// other Unix systems) or an earlier read failed; bytes waiting never make it dead, since they
// may be the rest of a response go-mssqldb stopped reading at an early error. The look is
// taken only after 50 ms without a socket read or a request, never waits,
// and ignores the deadlines go-mssqldb sets (connection timeout). After Close every Read and
// Write fails at once, whatever is still buffered.
//
// # Deadlines
//
// go-mssqldb calls SetDeadline before every Read and Write when a connection timeout is set.
// The conn stores deadlines and gives them to the socket only when a call needs the socket
// (and at once when one is blocked there), so a read served from the buffer costs no poller
// call. As with bufio and crypto/tls, buffered bytes are returned even after the deadline.
package mssqlbridge
