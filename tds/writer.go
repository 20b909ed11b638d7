package tds

import (
	"fmt"
	"io"
)

// Writer splits messages into packets and writes them to an io.Writer.
//
// Every packet goes out in exactly one Write call on the underlying writer,
// header and data together, from the Writer's own buffer (the caller's
// slices are copied, never retained). Every packet of a message but the
// last is exactly PacketSize bytes, header included, and the last is at
// most that (MS-TDS 2.2.3.1.3 requires this of clients since TDS 7.3).
// Within a message, PacketID counts 1, 2, ... 255, 0, 1, ... and the last
// packet carries StatusEOM; SPID is the value set with SetSPID (0 by
// default) and Window is 0.
//
// The first error from the underlying writer (or io.ErrShortWrite) is
// sticky: every later call returns it, since the peer may have received
// part of a message. So is the misuse of calling BeginMessage while a
// message is open. A Writer is not safe for concurrent use.
type Writer struct {
	w    io.Writer
	buf  []byte // the packet being built: header in buf[:HeaderSize], data up to buf[:size]
	size int    // packet size, header included; HeaderSize < size <= MaxPacketSize
	spid uint16

	// State of the open message; open is false between messages.
	open    bool
	typ     PacketType
	first   Status // status bits of the first packet (reset bits)
	last    Status // status bits of the last packet besides EOM (IGNORE)
	n       int    // bytes in buf, header included; HeaderSize when no data is buffered
	id      uint8  // PacketID of the last packet written in this message
	packets int    // packets written in this message

	err error // first error from the underlying writer; sticky
}

// NewWriter returns a Writer that writes packets of at most packetSize
// bytes, header included, to w. A packetSize of 0 or less means
// DefaultPacketSize; other values outside HeaderSize+1..MaxPacketSize are
// clamped into that range. Sizes below MinPacketSize are accepted so that
// tests can make many small packets; peers negotiate 512 to 32767.
func NewWriter(w io.Writer, packetSize int) *Writer {
	switch {
	case packetSize <= 0:
		packetSize = DefaultPacketSize
	case packetSize <= HeaderSize:
		packetSize = HeaderSize + 1
	case packetSize > MaxPacketSize:
		packetSize = MaxPacketSize
	}
	return &Writer{w: w, buf: make([]byte, packetSize), size: packetSize, n: HeaderSize}
}

// SetPacketSize sets the packet size, header included, for the messages
// written from now on. n must be in HeaderSize+1..MaxPacketSize
// (ErrInvalidPacketSize), and no streamed message may be open
// (ErrMessageOpen). It may allocate a larger buffer.
func (w *Writer) SetPacketSize(n int) error {
	if n <= HeaderSize || n > MaxPacketSize {
		return fmt.Errorf("%w: %d is outside %d..%d", ErrInvalidPacketSize, n, HeaderSize+1, MaxPacketSize)
	}
	if w.open {
		return fmt.Errorf("tds: SetPacketSize(%d): %w", n, ErrMessageOpen)
	}
	if n > len(w.buf) {
		w.buf = make([]byte, n)
	}
	w.size = n
	return nil
}

// PacketSize returns the packet size, header included.
func (w *Writer) PacketSize() int { return w.size }

// SetSPID sets the SPID written in the headers of the packets that follow.
func (w *Writer) SetSPID(spid uint16) { w.spid = spid }

// WriteMessage writes payload as one message of type typ: packets of at
// most PacketSize bytes, the last one with StatusEOM. An empty payload is
// one header-only packet. It makes exactly one Write on the underlying
// writer per packet and blocks as those Writes block. It returns
// ErrMessageOpen, writing nothing, while a streamed message is open.
func (w *Writer) WriteMessage(typ PacketType, payload []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.open {
		return fmt.Errorf("tds: WriteMessage(%v): %w", typ, ErrMessageOpen)
	}
	w.BeginMessage(typ, 0)
	if _, err := w.Write(payload); err != nil {
		return err
	}
	return w.EndMessage()
}

// BeginMessage opens a streamed message of type typ; Write adds data and
// EndMessage ends it. The bits of status go on the first packet
// (StatusResetConnection, StatusResetConnectionSkipTran), except
// StatusIgnore, which goes on the last packet with StatusEOM; a StatusEOM
// bit in status is ignored (EndMessage sets it). BeginMessage writes
// nothing. Calling it while a message is open is a misuse that makes the
// Writer fail: that and every later call returns an error wrapping
// ErrMessageOpen.
func (w *Writer) BeginMessage(typ PacketType, status Status) {
	if w.err != nil {
		return
	}
	if w.open {
		w.err = fmt.Errorf("tds: BeginMessage(%v) while a %v message is open: %w", typ, w.typ, ErrMessageOpen)
		return
	}
	w.open = true
	w.typ = typ
	w.first = status &^ (StatusEOM | StatusIgnore)
	w.last = status & StatusIgnore
	w.n = HeaderSize
	w.id = 0
	w.packets = 0
}

// Write adds p to the open message. It buffers up to one packet and writes
// a packet (without StatusEOM) only when the buffer is full and more data
// follows, so the last packet of a message always carries data unless the
// message is empty. It returns ErrNoMessage if no message is open. p is not
// retained.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if !w.open {
		return 0, fmt.Errorf("tds: Write: %w", ErrNoMessage)
	}
	written := 0
	for len(p) > 0 {
		if w.n == w.size {
			if err := w.flush(false); err != nil {
				return written, err
			}
		}
		c := copy(w.buf[w.n:w.size], p)
		w.n += c
		written += c
		p = p[c:]
	}
	return written, nil
}

// EndMessage writes the buffered data as the message's last packet, with
// StatusEOM (a header-only packet if the message is empty), and closes the
// message. It returns ErrNoMessage if no message is open.
func (w *Writer) EndMessage() error {
	if w.err != nil {
		return w.err
	}
	if !w.open {
		return fmt.Errorf("tds: EndMessage: %w", ErrNoMessage)
	}
	err := w.flush(true)
	w.open = false
	return err
}

// Clear zeroes the Writer's buffer, which keeps the bytes of the packets it wrote (the last
// one, and the tail of a longer one before it): for messages that carried a secret.
func (w *Writer) Clear() { clear(w.buf) }

// flush writes the buffered packet in one Write and empties the buffer.
func (w *Writer) flush(eom bool) error {
	var st Status
	if w.packets == 0 {
		st = w.first
	}
	if eom {
		st |= StatusEOM | w.last
	}
	w.id++
	Header{Type: w.typ, Status: st, Length: uint16(w.n), SPID: w.spid, PacketID: w.id}.Put(w.buf)
	n, err := w.w.Write(w.buf[:w.n])
	if err == nil && n != w.n {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("tds: write %v packet %d of a message: %w", w.typ, w.packets, err)
		w.open = false
		return w.err
	}
	w.packets++
	w.n = HeaderSize
	return nil
}
