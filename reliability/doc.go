// Package reliability is the suite that checks the tdsbridge transport against hostile peers,
// faults, load and fuzzing: tds, prelogin, bridge, tdstest and the go-mssqldb connector
// (mssqlbridge) together, over real loopback TCP.
//
// It is all tests. The wire-level helpers they share (a framing, recording and tampering
// proxy; a server running a test's script per connection; exact PRELOGIN and TDS packet bytes;
// a byte-counting conn) are in internal/wiretest, outside the module's public API.
//
// What the tests cover, by file:
//
//   - faults_sql_test.go: tdstest's faults (close, reset, wrong type, bad length, stall at
//     every phase) through database/sql and the connector, in full, login-only, strict and
//     no-encryption mode;
//   - faults_connector_test.go: PRELOGIN replies tdstest cannot produce (over the limit, bad
//     lengths, no ENCRYPTION, slow drip, ...) against the connector;
//   - faults_bridge_test.go, records_test.go: the handshake inside PRELOGIN packets and the
//     passthrough record layer under bridge.Reader (oversized packets, alerts, empty-message
//     floods, slowloris, corrupted and cut records at every position, size and cipher suite,
//     timeouts that must not be sticky);
//   - close_test.go, chaos_test.go, cancel_test.go: Close twice, Close during the handshake
//     and during blocked calls, Close at random moments, a storm of cancelled queries
//     (TestCancelStorm, without the race detector only), and queries while the server breaks
//     connections (right value or an error, never wrong data);
//   - security_test.go: downgrade (encryption stripped by a proxy or by the server), the login
//     never in clear (recorded), injection after the handshake, certificate checks in every
//     DSN form with parity against go-mssqldb's own TLS;
//   - load_test.go: load through database/sql on every encryption mode (TestLoad in make test;
//     TestSoak, 64 connections x 200 queries up to 4 MiB, only with RELIABILITY_SOAK=1);
//   - backpressure_test.go: what a client that stops reading holds, and how a Write against a
//     server that stops reading blocks;
//   - fuzz_test.go: FuzzClientHandshake, with its corpus under testdata/fuzz.
//
// # Where each test runs
//
// `make test` runs every test here under the race detector except TestCancelStorm, which skips
// under it (go-mssqldb v1.11.2 hands a closed connection's read buffer to the next connection,
// which the detector reports; see cancel_test.go); make test's second pass runs every test
// again without the detector, TestCancelStorm included. TestSoak skips unless
// RELIABILITY_SOAK=1. `make soak` runs TestSoak twice: under the race detector for
// correctness, then without it, with TestCancelStorm, for time and memory figures (the detector
// multiplies memory several times over). TestSoak logs its figures; run it with -v. The
// README's soak table says how each figure there was obtained.
package reliability
