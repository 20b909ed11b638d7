package bridge

import "io"

// TLS record layer constants (RFC 5246 section 6.2, RFC 8446 section 5).
const (
	recordHeaderLen = 5
	// maxRecordLen is the largest record crypto/tls accepts (TLSCiphertext
	// of 2^14+2048 bytes, plus the header).
	maxRecordLen = recordHeaderLen + 16384 + 2048

	recordTypeApplicationData = 0x17
)

// DefaultReadAheadSize is the read-ahead buffer size used when
// Options.ReadAheadSize is smaller (including 0).
const DefaultReadAheadSize = 64 << 10

// readAhead is the buffer between the socket and the layer above in
// passthrough and plaintext mode. buf[r:w] holds bytes read from the
// socket and not yet handed out.
//
// In record mode (passthrough) it tracks TLS record boundaries: recLeft is
// the number of bytes of the current record (the one whose header is at or
// before r) still to be handed out; 0 means r is at a record boundary, or
// inside a header of which fewer than 5 bytes have arrived (hdrHave).
// recType and recLen (the header's length field) describe the current
// record while recLeft > 0. A Read never crosses a record boundary, so the
// TLS layer holds at most one record and everything after it stays here,
// where peekReady can inspect it.
//
// All fields are protected by Conn.rmu.
type readAhead struct {
	buf  []byte
	r, w int

	recLeft int
	recType byte
	recLen  int
	// hdr holds the header of the next record while only hdrHave (< 5) of
	// its bytes have been handed out and recLeft is 0.
	hdr     [recordHeaderLen]byte
	hdrHave int
}

// init allocates the buffer and preloads it with seed (bytes that arrived
// before the switch, e.g. the rest of the last handshake message).
func (ra *readAhead) init(size int, seed []byte) {
	if size < len(seed) {
		size = len(seed)
	}
	ra.buf = make([]byte, size)
	ra.r, ra.w = 0, copy(ra.buf, seed)
	ra.resetRecords()
}

// buffered returns the number of bytes read from the socket and not yet
// handed out.
func (ra *readAhead) buffered() int { return ra.w - ra.r }

// fill makes one Read on src into the free space of the buffer, first
// compacting it so that a whole record fits behind the unread bytes. A
// Read that returns data together with an error keeps the data and drops
// the error: the socket reports it again on the next call.
func (ra *readAhead) fill(src io.Reader) error {
	if ra.r == ra.w {
		ra.r, ra.w = 0, 0
	} else if ra.r > 0 && len(ra.buf)-ra.w < maxRecordLen {
		ra.w = copy(ra.buf, ra.buf[ra.r:ra.w])
		ra.r = 0
	}
	n, err := src.Read(ra.buf[ra.w:])
	if n < 0 || n > len(ra.buf)-ra.w {
		return io.ErrShortBuffer
	}
	ra.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		// A Read of 0 bytes without an error: let the caller try again.
		return nil
	}
	return err
}

// startRecord makes the record at r current if none is and its header is
// known: buffered in full, or partly handed out already (hdrHave bytes,
// saved in hdr) and the rest buffered. It reports whether a record is
// current.
func (ra *readAhead) startRecord() bool {
	if ra.recLeft > 0 {
		return true
	}
	need := recordHeaderLen - ra.hdrHave
	if ra.w-ra.r < need {
		return false
	}
	copy(ra.hdr[ra.hdrHave:], ra.buf[ra.r:ra.r+need])
	ra.recType = ra.hdr[0]
	ra.recLen = int(ra.hdr[3])<<8 | int(ra.hdr[4])
	ra.recLeft = need + ra.recLen
	ra.hdrHave = 0
	return true
}

// readRecord copies buffered bytes of the current record into p and
// returns how many; 0 when nothing is buffered. It never copies past the
// end of the current record. At a record boundary with fewer than 5 bytes
// buffered it hands those out (a byte stream must not wait for bytes the
// caller did not ask for) and remembers them as the start of the header.
func (ra *readAhead) readRecord(p []byte) int {
	if !ra.startRecord() {
		n := copy(p, ra.buf[ra.r:ra.w])
		copy(ra.hdr[ra.hdrHave:], ra.buf[ra.r:ra.r+n])
		ra.hdrHave += n
		ra.r += n
		return n
	}
	n := min(ra.w-ra.r, ra.recLeft)
	n = copy(p, ra.buf[ra.r:ra.r+n])
	ra.r += n
	ra.recLeft -= n
	return n
}

// resetRecords forgets the record framing (switch to plaintext).
func (ra *readAhead) resetRecords() {
	ra.recLeft, ra.hdrHave = 0, 0
}

// readyRecord reports whether the rest of the current record, or the next
// record if none is current, is buffered in full, is application data and
// has a length field above minLen (so that it cannot be an empty record).
func (ra *readAhead) readyRecord(minLen int) bool {
	if !ra.startRecord() {
		return false
	}
	return ra.recType == recordTypeApplicationData && ra.recLen > minLen && ra.w-ra.r >= ra.recLeft
}

// readRaw copies buffered bytes into p without regard to records.
func (ra *readAhead) readRaw(p []byte) int {
	n := copy(p, ra.buf[ra.r:ra.w])
	ra.r += n
	return n
}
