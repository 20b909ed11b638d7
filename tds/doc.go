// Package tds frames TDS packets (MS-TDS 2.2.3.1): the 8-byte packet
// header, a [Writer] that splits messages into packets and a [Reader] that
// reassembles them under explicit limits.
//
// A TDS packet is an 8-byte [Header] followed by data; Header.Length counts
// the header too. A message is a run of packets of one type, the last one
// carrying [StatusEOM].
//
// # Writing
//
// A Writer makes exactly one Write on its underlying io.Writer per packet
// (header and data together), so a TLS connection underneath carries one
// packet per record. Packets are at most the Writer's packet size, header
// included; PacketID counts from 1 modulo 256 within each message.
//
// # Reading
//
// A Reader reads each header with one io.ReadFull of 8 bytes and each body
// with one io.ReadFull of exactly Length-8 bytes, so it never reads past the
// end of the packet, and therefore of the message, it returns: whatever
// follows stays unread in the underlying reader. Every length a peer sends
// is checked against the configured limits (maximum packet size, maximum
// message size) and every type against the allowed set before any buffer is
// grown. Bad input yields a [*PacketError] wrapping one of the sentinel
// errors ([ErrShortLength], [ErrPacketTooLarge], [ErrTypeChanged],
// [ErrUnexpectedType], [ErrTruncatedHeader], [ErrTruncatedPacket],
// [ErrMessageTooLarge]), to be tested with [errors.Is].
//
// Neither a Writer nor a Reader is safe for concurrent use by several
// goroutines; one goroutine may use a Reader while another uses a Writer on
// the same connection.
package tds
