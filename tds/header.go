package tds

import (
	"encoding/binary"
	"fmt"
)

// Sizes of packets, header included.
const (
	// HeaderSize is the size of a packet header.
	HeaderSize = 8
	// MinPacketSize is the smallest packet size a peer may negotiate.
	MinPacketSize = 512
	// MaxPacketSize is the largest packet size a peer may negotiate.
	MaxPacketSize = 32767
	// DefaultPacketSize is the packet size before negotiation; it is also
	// the largest packet allowed during the PRELOGIN and TLS handshake.
	DefaultPacketSize = 4096
	// MaxEncryptedPacketSize is the largest packet size SQL Server accepts
	// on an encrypted connection.
	MaxEncryptedPacketSize = 16383
)

// Header is a packet header. Its wire form is 8 bytes: Type, Status,
// Length (big-endian, header included), SPID (big-endian), PacketID and
// Window.
type Header struct {
	Type     PacketType
	Status   Status
	Length   uint16 // packet length, header included
	SPID     uint16 // server process id; clients send 0
	PacketID uint8  // counts packets modulo 256; receivers ignore it
	Window   uint8  // 0 when written; ignored when read
}

// Put writes the 8-byte wire form of h into b[:8]. b must have a length of
// at least HeaderSize; Put panics otherwise, like binary.BigEndian.PutUint16.
func (h Header) Put(b []byte) {
	_ = b[7] // one bounds check for the whole header
	b[0] = byte(h.Type)
	b[1] = byte(h.Status)
	binary.BigEndian.PutUint16(b[2:4], h.Length)
	binary.BigEndian.PutUint16(b[4:6], h.SPID)
	b[6] = h.PacketID
	b[7] = h.Window
}

// Append appends the 8-byte wire form of h to dst and returns the extended
// slice.
func (h Header) Append(dst []byte) []byte {
	return append(dst,
		byte(h.Type), byte(h.Status),
		byte(h.Length>>8), byte(h.Length),
		byte(h.SPID>>8), byte(h.SPID),
		h.PacketID, h.Window)
}

// ParseHeader decodes the header in b[:8]. It does not keep a reference
// to b. If len(b) < HeaderSize it returns an error wrapping
// ErrTruncatedHeader; if the decoded Length is below HeaderSize it returns
// the decoded header together with a *PacketError wrapping ErrShortLength.
// Other limits (maximum packet size, allowed types) are the Reader's.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: have %d of %d bytes", ErrTruncatedHeader, len(b), HeaderSize)
	}
	h := Header{
		Type:     PacketType(b[0]),
		Status:   Status(b[1]),
		Length:   binary.BigEndian.Uint16(b[2:4]),
		SPID:     binary.BigEndian.Uint16(b[4:6]),
		PacketID: b[6],
		Window:   b[7],
	}
	if h.Length < HeaderSize {
		return h, &PacketError{Err: ErrShortLength, Header: h,
			Detail: fmt.Sprintf("length %d < %d", h.Length, HeaderSize)}
	}
	return h, nil
}

// String formats h for logs and error messages, for example
// "PRELOGIN EOM len=47 spid=0 id=1 window=0".
func (h Header) String() string {
	return fmt.Sprintf("%v %v len=%d spid=%d id=%d window=%d",
		h.Type, h.Status, h.Length, h.SPID, h.PacketID, h.Window)
}
