package tds

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Errors for bad peer input. The Reader returns each one wrapped in a
// *PacketError that says what was wrong and where; test with errors.Is.
var (
	// ErrShortLength: a header's Length is below HeaderSize.
	ErrShortLength = errors.New("tds: packet length below the header size")
	// ErrPacketTooLarge: a header's Length is above the maximum packet size.
	ErrPacketTooLarge = errors.New("tds: packet larger than the maximum packet size")
	// ErrTypeChanged: a packet's type differs from the type of the earlier
	// packets of its message.
	ErrTypeChanged = errors.New("tds: packet type changed within a message")
	// ErrUnexpectedType: a packet's type is not in the Reader's allowed set.
	ErrUnexpectedType = errors.New("tds: packet type not allowed here")
	// ErrTruncatedHeader: the stream ended inside a packet header, or
	// between packets of an unfinished message. It also matches
	// io.ErrUnexpectedEOF.
	ErrTruncatedHeader = fmt.Errorf("tds: truncated packet header: %w", io.ErrUnexpectedEOF)
	// ErrTruncatedPacket: the stream ended inside a packet body. It also
	// matches io.ErrUnexpectedEOF.
	ErrTruncatedPacket = fmt.Errorf("tds: truncated packet body: %w", io.ErrUnexpectedEOF)
	// ErrMessageTooLarge: a message's payload would exceed the maximum
	// message size.
	ErrMessageTooLarge = errors.New("tds: message larger than the maximum message size")
)

// Errors for misuse of a Writer.
var (
	// ErrMessageOpen: WriteMessage, BeginMessage or SetPacketSize was called
	// while a message begun with BeginMessage was still open.
	ErrMessageOpen = errors.New("tds: a streamed message is still open")
	// ErrNoMessage: Write or EndMessage was called without BeginMessage.
	ErrNoMessage = errors.New("tds: no streamed message is open")
	// ErrInvalidPacketSize: a packet size outside HeaderSize+1..MaxPacketSize.
	ErrInvalidPacketSize = errors.New("tds: invalid packet size")
)

// PacketError describes bad input found in a packet: Err is one of the
// sentinel errors, the other fields say where. errors.Is matches both Err
// and Cause.
type PacketError struct {
	Err    error  // the sentinel: ErrShortLength, ErrPacketTooLarge, ...
	Detail string // what exactly was wrong, e.g. "length 5000 > 4096"
	Cause  error  // the underlying read error (io.EOF, io.ErrUnexpectedEOF), or nil

	// Header is the offending packet's header; the zero Header when the
	// header could not be read whole. Raw holds the header bytes that were
	// read (RawLen of them).
	Header Header
	Raw    [HeaderSize]byte
	RawLen int

	// Where, when the error comes from a Reader (Located is true).
	Located       bool
	Packet        int   // index of the packet within its message, from 0
	MessageOffset int   // payload bytes of the message before this packet
	StreamOffset  int64 // offset of the packet's first header byte in the Reader's stream
}

// Error returns the sentinel's text, the detail and the location.
func (e *PacketError) Error() string {
	var b strings.Builder
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("tds: bad packet")
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Located {
		fmt.Fprintf(&b, " (packet %d of the message, message offset %d, stream offset %d",
			e.Packet, e.MessageOffset, e.StreamOffset)
		if e.RawLen > 0 {
			fmt.Fprintf(&b, ", header bytes [% x]", e.Raw[:e.RawLen])
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap returns Err and, when set, Cause.
func (e *PacketError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}
