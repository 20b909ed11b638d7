// Package login7 encodes and decodes TDS LOGIN7 messages (MS-TDS 2.2.6.4), the client's login.
//
// The package is a pure codec over []byte: it does no I/O and knows nothing of packet
// framing. A message is the data of the LOGIN7 packets with their 8-byte headers removed
// (package tds reassembles messages); every offset in it counts from its first byte.
//
// # Wire format
//
// A fixed part (FixedLen bytes; FixedLen71 for TDS 7.0 and 7.1) holds the message's Length,
// its TDSVersion, numbers and flags (the Off* constants), and the OffsetLength table: for each
// variable field ([Field]) an offset and a length, in characters for UCS-2 strings and in bytes
// for the others. The variable data follows. With fExtension ([FlagExtension]) set, the
// Extension field holds the 4-byte offset of a FeatureExt block: entries of (FeatureId u8,
// FeatureDataLen u32 LE, FeatureData) ended by [FeatureTerminator]; FEDAUTH ([FedAuth]) is one.
// The password and the new password are obfuscated, not encrypted (internal/login7pw).
//
// # Two readings
//
// [Parse] is the structural reading, which a client needs to know where its secrets lie: it
// checks that the message's length is its Length field and at most [MaxLen], that its
// TDSVersion is one whose layout is known, that every non-empty field lies in the variable
// data, and that FeatureExt is well formed, and returns a [Layout] of spans without copying a
// byte. [Layout.Extent] stretches a field to the next one, for secrets whose declared length
// may be short (see there).
//
// [Message.Decode] is the server's reading: Parse, then the values, with the limits of MS-TDS
// on string lengths ([Field.MaxChars]) and a FEDAUTH feature that must decode. [Message.Encode]
// writes the canonical layout (fields in table order, contiguous); Decode then Encode
// reproduces a canonical message byte for byte.
//
// Tolerated by both readings: empty fields with any offset (no byte is read), fields that
// overlap or leave gaps, a cbExtension over 4, and FeatureExt read whenever fExtension is set
// from TDS 7.2 on (MS-TDS defines it for 7.4; reading it earlier can only find more secrets).
//
// # Errors
//
// Malformed input gets a *[FormatError] wrapping [ErrMalformed] whose text names the field and
// the offset ("login7: malformed LOGIN7: UserName at offset 60000 length 4 lies outside the
// variable data [94, 150)"); a Message Encode cannot write, one wrapping [ErrInvalidMessage].
//
// # Memory and concurrency
//
// Parse, Decode and DecodeFedAuth neither modify nor retain their input; a decoded Message
// owns its strings and byte slices. A Message is not safe for concurrent use.
package login7
