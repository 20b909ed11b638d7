// Package bridge is the TLS transport for TDS: a net.Conn (Conn) that sits
// between crypto/tls and the TCP socket and carries the TLS handshake
// inside PRELOGIN packets, as SQL Server requires for TDS 7.x, then gets
// out of the way.
//
// # Modes
//
// Handshake (StateHandshake): everything the TLS layer writes before it
// next reads is one flight; Write only buffers it, and the next Read sends
// it as one PRELOGIN (0x12) message in packets of at most 4096 bytes (EOM
// on the last), then reads the peer's next message to EOM and hands its
// payload to the TLS layer across as many Reads as it takes. A server may
// answer with PRELOGIN or, like pre-7.2 servers, tabular result (0x04)
// packets; a client must use PRELOGIN. The bridge reads exactly each
// packet header and body, never past the end of the message.
//
// The switch (StartPassthrough, StartPlaintext) sends the flight the TLS
// layer wrote after its last read, which the peer still waits for as a
// PRELOGIN message (see StartPassthrough).
//
// Passthrough (StatePassthrough): after the handshake every TLS record goes
// straight to the socket. Write passes the caller's slice to one socket
// Write, without copying, so with tls.Config.DynamicRecordSizingDisabled
// one TDS packet stays one record. Read goes through a read-ahead buffer
// (64 KiB or more, taken from a pool while it holds bytes, so an idle
// connection holds none) and hands the TLS layer at most one record per
// call, so nothing after a record has reached the TLS layer when the caller
// switches to plaintext; after CoalesceRecords (for a connection that stays
// in passthrough) a Read also hands over the application-data records that
// follow, and Reader builds on that. The socket is read only when nothing
// is buffered: if nobody reads, nothing is read and TCP pushes back on the
// peer.
//
// Plaintext (StatePlaintext): raw bytes both ways, for login-only
// encryption after the first LOGIN7 packet and for connections without
// TLS that still want the read-ahead buffer.
//
// # States
//
// One function, Conn.transition, makes every state change:
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
// In StateFailed the first error, wrapped with the phase it happened in
// ("bridge: handshake: read PRELOGIN reply: ..."), is returned by every
// later call (sticky). In passthrough and plaintext mode the socket's own
// errors are returned as they are (io.EOF, *net.OpError), as a bare socket
// returns them; a permanent one is sticky for its own direction only, so a
// failed Write does not hide bytes already buffered for Read.
// Timeouts are never sticky: after one, a new deadline lets the next call
// succeed (during the handshake only if no byte of the message had moved).
//
// # Stack depth
//
// A passthrough Read sits under crypto/tls on every wait for the socket,
// and callers often read from a goroutine they have just started (a
// database driver reading each response), whose stack the runtime has just
// grown to fit the caller. A few frames more on that path than a tls.Conn
// on a bare socket would make the runtime grow and copy the stack a second
// time on every such read (several percent of a small round trip's CPU).
// So the path from the TLS layer to the socket is Read, then fill, then the
// socket's Read, with small frames; TestReadStackDepth keeps it so.
//
// # Typical client use
//
//	b, tc := bridge.Client(raw, cfg, bridge.Options{}) // tc = tls.Client(b, ...)
//	if err := tc.HandshakeContext(ctx); err != nil { ... }
//	if err := b.StartPassthrough(); err != nil { ... }
//	r := bridge.NewReader(tc, b, 64<<10) // reads; tc.Write for writes
//
// or, to read tc itself (small reads, as a database driver makes):
//
//	if err := b.CoalesceRecords(tc.ConnectionState()); err != nil { ... }
//
// The server side is the same with bridge.Server. Client and Server are New and
// tls.Client or tls.Server with TLSConfig: the tls.Conn sits on the bridge by construction.
package bridge
