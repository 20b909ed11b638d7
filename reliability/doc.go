// Package reliability is the suite that checks the tdsbridge transport against hostile peers,
// faults, load and fuzzing: tds, prelogin, bridge, tdstest and the go-mssqldb connector
// (mssqlbridge) together, over real loopback TCP.
//
// Almost all of it is tests. The package itself holds the helpers the tests share:
//
//   - Proxy: a loopback TCP proxy that frames each direction into TDS packets and TLS
//     records (Unit), records every byte that crossed, and lets a Tamper rewrite, drop, inject,
//     corrupt or cut units (strip the ENCRYPTION option of a PRELOGIN reply, flip a byte of an
//     encrypted record, insert plaintext after the handshake).
//   - ScriptServer: a loopback server whose connections run a test's script, for peers that
//     misbehave in ways tdstest does not offer (oversized packets, TLS alerts, fuzzed replies).
//   - CountingConn: a net.Conn that counts the bytes read and written, for backpressure
//     figures.
//
// What the tests cover (see each file): the fault matrix (faults_test.go), downgrade,
// injection and certificate checks (security_test.go), load through database/sql
// (load_test.go; the long form runs only with RELIABILITY_SOAK=1), backpressure
// (backpressure_test.go) and the client handshake fuzz target (fuzz_test.go).
//
// Every helper here is for tests on loopback: none of it is meant for production traffic.
package reliability
