// Package prelogin encodes and decodes TDS PRELOGIN payloads (MS-TDS 2.2.6.5) and implements the
// ENCRYPTION negotiation table that decides whether, and how much of, a connection runs over TLS.
//
// The package is a pure codec over []byte: it does no I/O and knows nothing of TDS packet
// framing. A PRELOGIN payload is the data of a PRELOGIN message with the 8-byte packet headers
// removed (package tds reassembles messages).
//
// # Wire format
//
// A payload is an option table followed by option data. Each table entry is 5 bytes: the token
// (u8), the data offset (u16 big-endian, from the start of the payload) and the data length
// (u16 big-endian). The table ends with the terminator token 0xFF.
//
// # Canonical layout and round trips
//
// [Message.Encode] writes the canonical layout: the option table, the terminator, then each option's data
// in table order, contiguous, starting right after the terminator. [Message.Decode] keeps the table order
// and the options it does not know (as raw Options), so decoding a canonical payload and encoding
// the result reproduces the payload byte for byte. The SQL Server 2008 reply quoted in
// docs/protocol.md, whose zero-length THREADID shares its offset with MARS, is canonical in this sense
// and round-trips exactly.
//
// # What Decode rejects and what it tolerates
//
// Decode is the strict reading: the one a server applies to a client's PRELOGIN, and the one a
// round trip needs. A client reading a server's reply checks less (next section).
//
// Rejected, each with a sentinel error wrapped in a [*FormatError] that names the token and the
// byte offset of its table entry: a table that runs off the end of the payload without a
// terminator ([ErrNoTerminator], [ErrTruncatedTable]), option data outside the data area
// ([ErrOptionBounds]: the data area is from the byte after the terminator to the end of the
// payload; an empty option only needs an offset within the payload), two options whose non-empty data overlap ([ErrOptionOverlap]), a token that appears
// twice ([ErrDuplicateOption]), VERSION anywhere but the first entry ([ErrVersionNotFirst]), and a
// known fixed-size option of the wrong length ([ErrOptionLength]).
//
// Tolerated, because peers send it or because it is harmless:
//   - THREADID with length 0 as well as 4 (servers SHOULD send 0 bytes, MS-TDS 2.2.6.5); the
//     Message records which form it saw (ThreadIDEmpty).
//   - zero-length options sharing an offset with another option (SQL Server 2008), and
//     zero-length options whose offset points anywhere in the payload, the table included (no
//     byte is read from it; an offset past the end of the payload is still ErrOptionBounds).
//   - INSTOPT of any length (a client sends a NUL-terminated name, a server one byte).
//   - option data in an order other than table order, gaps between option data, and trailing
//     bytes that no option refers to. Such a payload decodes; Encode then writes the canonical
//     layout, so it does not round-trip byte for byte.
//   - a payload without VERSION or without ENCRYPTION (HasVersion / HasEncryption report it;
//     EncryptionOf and SetEncryption return ErrNoEncryptionOption for the latter).
//   - any value in the one-byte options (ENCRYPTION, MARS, FEDAUTHREQUIRED, a server's INSTOPT):
//     judging values is the negotiation's business, not the codec's.
//
// # Reading a server's reply
//
// A client acts on one option of a reply, ENCRYPTION; go-mssqldb v1.11.2 also reads
// FEDAUTHREQUIRED and checks its length itself. [ReplyEncryptionOf] and [SetReplyEncryption]
// check a reply for what a client needs and accept everything else go-mssqldb accepts:
//   - any length for every option but ENCRYPTION: Babelfish for PostgreSQL 4.2 echoes a
//     client's TRACEID with length 0 (at the payload's end) and sends THREADID with length 0,
//     and go-mssqldb skips TRACEID in replies;
//   - VERSION anywhere in the table, a token other than ENCRYPTION repeated, option data inside
//     the option table, and overlapping option data, except for the ENCRYPTION byte.
//
// What stays refused, and why:
//   - a table without its terminator or with a truncated entry (ErrNoTerminator,
//     ErrTruncatedTable), and an option whose data, even empty, lie past the end of the payload
//     (ErrOptionBounds; TRACEID too, although go-mssqldb skips it): the table describes bytes
//     the server did not send, so the reply was cut or altered on its way, and its ENCRYPTION
//     byte is no more to be trusted than the rest.
//   - a reply without ENCRYPTION (ErrNoEncryptionOption): whether the server encrypts would be
//     a guess, and stripping the option is the simplest downgrade a man in the middle has;
//     go-mssqldb refuses it too.
//   - ENCRYPTION twice (ErrDuplicateOption): the client and the driver it hands the reply to
//     could act on different copies (go-mssqldb reads the last one).
//   - ENCRYPTION of a length other than 1 (ErrOptionLength): an empty one has no value, a
//     longer one no single value.
//   - an ENCRYPTION byte inside the option table (ErrOptionBounds) or inside another option's
//     data (ErrOptionOverlap): rewriting it for the driver would change the table or that
//     option as the driver reads them.
//   - in [ClientOutcome], a reply of OFF or NOT_SUP to a client that sent ON or REQ
//     (ErrServerNoEncryption): a downgrade, the login would leave in the clear, in part or
//     whole; go-mssqldb refuses it too.
//   - in [ClientOutcome], a reply that requires encryption (OFF, ON or REQ) to a client that
//     sent NOT_SUP (ErrServerRequiresEncryption): MS-TDS has the server close the connection,
//     and the client has no TLS settings to run a handshake with (go-mssqldb runs one with
//     defaults, checked against the system roots, although encrypt=disable dropped the user's
//     own trust settings).
//   - in [ClientOutcome], a value outside the negotiation table (ErrInvalidEncryption:
//     reserved or unknown values, the CLIENT_CERT bit, STRICT): what the server would encrypt
//     is undefined (go-mssqldb takes any value but OFF and NOT_SUP for full encryption); no
//     server is known to send one.
//
// Encode can fail on a decoded Message only when the payload was longer than 65535 bytes: its
// options' data may then add up to more than an encoded payload can hold ([ErrTooLarge]).
//
// # Negotiation
//
// [ClientOutcome] gives the client's view (what I sent, what came back: which [Mode] the
// connection runs in) and [ServerReply] the server's (my setting, what the client sent: what
// do I reply, in which Mode, do I close). Both follow the table in MS-TDS 2.2.6.5
// (docs/protocol.md, section "PRELOGIN"); the doc comments of ClientOutcome, ServerReply and
// EncryptStrict say how the CLIENT_CERT bit and go-mssqldb's STRICT value (0x04) are treated.
//
// # Memory and concurrency
//
// Decode never keeps a reference to its input; the variable-length data it decodes (INSTOPT,
// unknown options) lives in storage owned by the Message and reused by the next Decode on it.
// Decoding into a reused Message and encoding into a reused buffer do not allocate in the
// steady state. A Message is not safe for concurrent use; distinct Messages are independent.
// [EncryptionOf] and [SetEncryption] work on the caller's payload in place and allocate only on error.
package prelogin
