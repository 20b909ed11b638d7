// Package bridge is the TLS transport for TDS: a [Conn] sits between [crypto/tls] and the TCP
// socket, carries the TLS handshake inside PRELOGIN packets, as SQL Server requires for TDS 7.x,
// then gets out of the way. [Client] and [Server] return a bridge and the [tls.Conn] on it.
//
// # Modes
//
// Handshake ([StateHandshake]): everything the TLS layer writes before it next reads is one
// flight. Write only buffers it; the next Read sends it as one PRELOGIN (0x12) message in packets
// of at most 4096 bytes, then reads the peer's next message (of the types [Role] allows, in
// packets of up to 32767 bytes) to EOM, never past it, and hands its payload over across as many
// Reads as it takes. The switch ([Conn.StartPassthrough], [Conn.StartPlaintext]) sends the last
// flight.
//
// Passthrough ([StatePassthrough]): TLS records go straight to the socket. Write is one socket
// Write of the caller's slice, so with [TLSConfig] one TDS packet stays one record. Read hands the
// TLS layer at most one record per call from a pooled read-ahead buffer ([Options.ReadAheadSize]),
// so that nothing past a record has reached the TLS layer when the caller switches to plaintext;
// after [Conn.CoalesceRecords] it also hands over the application-data records that follow, which
// [Reader] builds on. The socket is read only when nothing is buffered: if nobody reads, TCP
// pushes back on the peer.
//
// Plaintext ([StatePlaintext]): raw bytes both ways, for login-only encryption after the first
// LOGIN7 packet and for connections without TLS that still want the read-ahead buffer.
//
// # States
//
// One checked transition function makes every state change:
//
//	                New(Direct: false)          New(Direct: true)
//	                       |                           |
//	                       v                           |
//	                +-----------+  StartPassthrough    |
//	                | handshake |-------------------+  |
//	                +-----------+                   v  v
//	                   |                     +-------------+
//	    StartPlaintext |                     | passthrough |
//	                   v                     +-------------+
//	                +-----------+  StartPlaintext  |
//	                | plaintext |<-----------------+
//	                +-----------+
//
//	handshake --(first error: socket, framing, packet type, EOF)--> failed
//	any state except closed --Close--> closed;  failed --Close--> closed
//
// In [StateFailed] the first error, wrapped with its phase ("bridge: handshake: read PRELOGIN
// reply: ..."), is returned by every later call (sticky). In passthrough and plaintext the
// socket's own errors are returned as they are ([io.EOF], [*net.OpError]), as a bare socket
// returns them; a permanent one is sticky for its own direction only, so a failed Write does not
// hide bytes buffered for Read. Timeouts are never sticky: after one, a new deadline lets the next
// call succeed (during the handshake only if no byte of the message had moved).
//
// # Stack depth
//
// The path from the TLS layer to the socket is two small frames longer than on a bare socket, so
// that a read does not grow a goroutine's stack a second time (docs/design.md, "Stack depth").
package bridge
