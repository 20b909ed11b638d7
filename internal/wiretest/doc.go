// Package wiretest holds the wire-level helpers of the reliability suite (package reliability
// and its tests), kept inside the module rather than in its public API:
//
//   - Proxy: a loopback TCP proxy that frames each direction into TDS packets and TLS
//     records (Unit), records every byte that crossed (Session), and lets a Tamper rewrite,
//     drop, inject, corrupt or cut units (strip the ENCRYPTION option of a PRELOGIN reply, flip
//     a byte of an encrypted record, insert plaintext after the handshake).
//   - ScriptServer: a loopback server whose connections run a test's script, for peers that
//     misbehave in ways tdstest does not offer (oversized packets, TLS alerts, fuzzed replies).
//   - Packet, PreloginPayload, PreloginReply, ReadClientPrelogin: exact bytes for such scripts.
//   - CountingConn: a net.Conn that counts the bytes read and written, for backpressure
//     figures.
//   - PasswordForms, ContainsPassword: a LOGIN7 password as it would appear on the wire.
//
// Both servers are built on internal/loopback: Close closes every connection and returns only
// when every goroutine has ended. Everything here is for tests on loopback.
package wiretest
