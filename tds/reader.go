package tds

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxMessageSize is the maximum message payload a Reader accepts
// when ReaderConfig.MaxMessageSize is 0: 1 MiB.
const DefaultMaxMessageSize = 1 << 20

// ReaderConfig holds a Reader's limits.
type ReaderConfig struct {
	// MaxPacketSize is the largest packet accepted, header included.
	// 0 means DefaultPacketSize; values above MaxPacketSize mean
	// MaxPacketSize.
	MaxPacketSize int
	// MaxMessageSize is the largest message payload accepted (the sum of
	// the packet bodies, headers excluded). 0 means DefaultMaxMessageSize.
	MaxMessageSize int
	// Allowed is the set of packet types accepted; the empty set accepts
	// every type.
	Allowed TypeSet
}

// Reader reads packets and reassembles messages from an io.Reader.
//
// It reads each header with one io.ReadFull of HeaderSize bytes and each
// body with one io.ReadFull of exactly Length-HeaderSize bytes: it never
// reads past the end of the packet it returns, so bytes that follow a
// message stay in the underlying reader. Each header is validated (type
// allowed, same type as the rest of its message, length within
// HeaderSize..MaxPacketSize, message within MaxMessageSize) before any
// buffer grows. A buffer grows (by doubling) only when a validated packet
// needs room, so a peer cannot make the Reader allocate much more than
// twice what it has sent plus one packet, and the internal buffer never
// grows beyond MaxMessageSize.
//
// Errors are sticky: once a call fails, every later call returns the same
// error, because the position in the stream is lost. The exception is a
// failure that consumed no byte at a message boundary (a clean io.EOF, or a
// timeout before the first byte of a message): the stream is intact and the
// call may be retried.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	r          io.Reader
	maxPacket  int
	maxMessage int
	allowed    TypeSet

	hdr [HeaderSize]byte
	buf []byte // reused for ReadPacket bodies and ReadMessage payloads

	off int64 // bytes consumed from r

	// The message being read; inMsg is true after a packet without EOM.
	inMsg  bool
	typ    PacketType
	packet int    // index in its message of the next packet
	msgLen int    // payload bytes of the message before the next packet
	status Status // OR of the status bits of the message's packets so far

	err error // first error that lost the stream position; sticky
}

// NewReader returns a Reader of packets from r with the limits of cfg.
// It allocates no buffer until the first packet.
func NewReader(r io.Reader, cfg ReaderConfig) *Reader {
	rd := &Reader{r: r, allowed: cfg.Allowed}
	rd.SetMaxPacketSize(cfg.MaxPacketSize)
	rd.SetMaxMessageSize(cfg.MaxMessageSize)
	return rd
}

// SetMaxPacketSize sets the largest packet accepted from now on, header
// included (for example after the packet size was negotiated). n <= 0
// means DefaultPacketSize; n is clamped into HeaderSize..MaxPacketSize.
func (r *Reader) SetMaxPacketSize(n int) {
	switch {
	case n <= 0:
		n = DefaultPacketSize
	case n < HeaderSize:
		n = HeaderSize
	case n > MaxPacketSize:
		n = MaxPacketSize
	}
	r.maxPacket = n
}

// MaxPacketSize returns the largest packet accepted, header included.
func (r *Reader) MaxPacketSize() int { return r.maxPacket }

// SetMaxMessageSize sets the largest message payload accepted from now on;
// n <= 0 means DefaultMaxMessageSize.
func (r *Reader) SetMaxMessageSize(n int) {
	if n <= 0 {
		n = DefaultMaxMessageSize
	}
	r.maxMessage = n
}

// SetAllowed sets the packet types accepted from now on; the empty set
// accepts every type.
func (r *Reader) SetAllowed(s TypeSet) { r.allowed = s }

// MessageStatus returns the status bits of the packets of the message last
// returned by ReadMessage (or being read by ReadPacket), OR-ed together:
// StatusEOM, StatusIgnore if the sender asked to ignore the message, and
// the reset bits of its first packet.
func (r *Reader) MessageStatus() Status { return r.status }

// ReadMessage reads packets up to and including the one with StatusEOM and
// returns the message's type and payload (the packet bodies joined).
// payload aliases the Reader's internal buffer, reused by the next call to
// ReadMessage or ReadPacket, and is valid only until then. If ReadPacket
// left a message unfinished, ReadMessage returns the rest of it. A message
// with StatusIgnore is returned like any other (see MessageStatus); status
// bits other than StatusEOM, the SPID, PacketID and Window are not checked
// (receivers ignore PacketID, MS-TDS 2.2.3.1.5).
//
// At the end of the stream before the first byte of a message it returns
// io.EOF; an end anywhere else is ErrTruncatedHeader or ErrTruncatedPacket.
func (r *Reader) ReadMessage() (typ PacketType, payload []byte, err error) {
	typ, payload, err = r.AppendMessage(r.buf[:0])
	if cap(payload) > cap(r.buf) {
		r.buf = payload[:0]
	}
	if err != nil {
		return 0, nil, err
	}
	return typ, payload, nil
}

// AppendMessage is ReadMessage into a caller-owned buffer: it appends the
// payload to dst, growing it as needed (never beyond the validated limits),
// and returns the extended slice. On error it returns dst, possibly with
// more capacity, and the length it had.
func (r *Reader) AppendMessage(dst []byte) (PacketType, []byte, error) {
	start := len(dst)
	for {
		h, out, err := r.next(dst)
		if err != nil {
			return 0, out[:start], err
		}
		dst = out
		if h.Status&StatusEOM != 0 {
			return h.Type, dst, nil
		}
	}
}

// ReadPacket reads one packet and returns its header and body. body
// aliases the Reader's internal buffer, reused by the next call to
// ReadPacket or ReadMessage, and is valid only until then. ReadPacket
// applies the same checks as ReadMessage, including those that span a
// message (same type, MaxMessageSize). At the end of the stream before the
// first byte of a message it returns io.EOF.
func (r *Reader) ReadPacket() (Header, []byte, error) {
	h, body, err := r.AppendPacket(r.buf[:0])
	if cap(body) > cap(r.buf) {
		r.buf = body[:0]
	}
	if err != nil {
		return Header{}, nil, err
	}
	return h, body, nil
}

// AppendPacket is ReadPacket into a caller-owned buffer: it appends the
// packet's body to dst, growing it by at most the validated body length,
// and returns the extended slice. On error it returns dst, possibly with
// more capacity, and the length it had.
func (r *Reader) AppendPacket(dst []byte) (Header, []byte, error) {
	return r.next(dst)
}

// next reads one packet, validates it, appends its body to dst and updates
// the message state. On error it returns dst with its length unchanged.
func (r *Reader) next(dst []byte) (Header, []byte, error) {
	if r.err != nil {
		return Header{}, dst, r.err
	}
	pos := r.off
	n, err := io.ReadFull(r.r, r.hdr[:])
	r.off += int64(n)
	if err != nil {
		if n == 0 && !r.inMsg {
			// Nothing consumed at a message boundary: the stream is intact.
			if err == io.EOF {
				return Header{}, dst, io.EOF
			}
			return Header{}, dst, fmt.Errorf("tds: read packet header at stream offset %d: %w", pos, err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			detail := fmt.Sprintf("stream ended after %d of %d header bytes", n, HeaderSize)
			if n == 0 {
				detail = "stream ended before the next packet of an unfinished message"
			}
			pe := r.packetError(ErrTruncatedHeader, Header{}, r.hdr[:n], pos, detail)
			pe.Cause = err
			return Header{}, dst, r.fail(pe)
		}
		return Header{}, dst, r.fail(fmt.Errorf("tds: read packet header at stream offset %d (%d of %d bytes read): %w",
			pos, n, HeaderSize, err))
	}
	h := Header{
		Type:     PacketType(r.hdr[0]),
		Status:   Status(r.hdr[1]),
		Length:   binary.BigEndian.Uint16(r.hdr[2:4]),
		SPID:     binary.BigEndian.Uint16(r.hdr[4:6]),
		PacketID: r.hdr[6],
		Window:   r.hdr[7],
	}
	if err := r.check(h, pos); err != nil {
		return Header{}, dst, r.fail(err)
	}
	bodyLen := int(h.Length) - HeaderSize // validated: 0..maxPacket-HeaderSize
	start := len(dst)
	// The message began at dst[start-r.msgLen] if dst holds it whole (as in
	// AppendMessage): it cannot need room beyond that plus maxMessage.
	dst = grow(dst, bodyLen, start-r.msgLen+r.maxMessage)[:start+bodyLen]
	n, err = io.ReadFull(r.r, dst[start:])
	r.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			pe := r.packetError(ErrTruncatedPacket, h, r.hdr[:], pos,
				fmt.Sprintf("stream ended after %d of %d body bytes", n, bodyLen))
			pe.Cause = err
			return Header{}, dst[:start], r.fail(pe)
		}
		return Header{}, dst[:start], r.fail(fmt.Errorf("tds: read body of %v packet at stream offset %d (%d of %d bytes read): %w",
			h.Type, pos, n, bodyLen, err))
	}
	if !r.inMsg {
		r.typ = h.Type
		r.status = 0
	}
	r.status |= h.Status
	if h.Status&StatusEOM != 0 {
		r.inMsg, r.packet, r.msgLen = false, 0, 0
	} else {
		r.inMsg = true
		r.packet++
		r.msgLen += bodyLen
	}
	return h, dst, nil
}

// grow returns dst with room for n more bytes. It doubles the capacity to
// amortize growth, but not beyond limit, the most the message can need;
// the result always has room for the n bytes.
func grow(dst []byte, n, limit int) []byte {
	need := len(dst) + n
	if need <= cap(dst) {
		return dst
	}
	c := max(min(max(2*cap(dst), 512), limit), need)
	nb := make([]byte, len(dst), c)
	copy(nb, dst)
	return nb
}

// check validates h, the header of the next packet, which starts at stream
// offset pos.
func (r *Reader) check(h Header, pos int64) error {
	if r.allowed != 0 && !r.allowed.Has(h.Type) {
		return r.packetError(ErrUnexpectedType, h, r.hdr[:], pos, fmt.Sprintf("type %v", h.Type))
	}
	if r.inMsg && h.Type != r.typ {
		return r.packetError(ErrTypeChanged, h, r.hdr[:], pos, fmt.Sprintf("type %v in a %v message", h.Type, r.typ))
	}
	if h.Length < HeaderSize {
		return r.packetError(ErrShortLength, h, r.hdr[:], pos,
			fmt.Sprintf("length %d < %d", h.Length, HeaderSize))
	}
	if int(h.Length) > r.maxPacket {
		return r.packetError(ErrPacketTooLarge, h, r.hdr[:], pos,
			fmt.Sprintf("length %d > %d", h.Length, r.maxPacket))
	}
	if bodyLen := int(h.Length) - HeaderSize; bodyLen > r.maxMessage-r.msgLen {
		return r.packetError(ErrMessageTooLarge, h, r.hdr[:], pos,
			fmt.Sprintf("%d + %d payload bytes > %d", r.msgLen, bodyLen, r.maxMessage))
	}
	return nil
}

// packetError returns a located *PacketError for the packet whose header
// (raw, as far as it was read) starts at stream offset pos.
func (r *Reader) packetError(sentinel error, h Header, raw []byte, pos int64, detail string) *PacketError {
	pe := &PacketError{
		Err: sentinel, Detail: detail, Header: h,
		Located: true, Packet: r.packet, MessageOffset: r.msgLen, StreamOffset: pos,
	}
	pe.RawLen = copy(pe.Raw[:], raw)
	return pe
}

// fail records err as the sticky error and returns it.
func (r *Reader) fail(err error) error {
	r.err = err
	return err
}
