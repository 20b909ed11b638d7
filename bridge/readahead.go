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

// readAhead is the one buffer between the socket and the layer above in
// passthrough and plaintext mode: buf[r:w] holds bytes read from the
// socket and not yet handed out. A Read hands out what hand allows and
// reads the socket (Conn.fill) only when it allows nothing.
//
// Buffer ownership: buf is nil while nothing is buffered, so an idle
// connection holds no buffer. space takes a buffer of the configured size
// from pool, and the hand-out of its last byte gives it back (release).
// Right after the handshake buf may instead be the seed, the unread rest
// of the peer's last handshake message, served as it is and dropped when
// drained. A Read that waits on the socket holds its buffer while it waits.
//
// Record framing (passthrough): recLeft is the number of bytes of the
// current record still to be handed out; 0 means r is at a record
// boundary, or inside a header of which only hdrHave (< 5) bytes were
// handed out so far (kept in hdr). recType and recLen (the header's length
// field) describe the current record while recLeft > 0.
//
// All fields are protected by Conn.rmu.
type readAhead struct {
	pool *bufPool
	bufp *[]byte // the pooled buffer buf is, or nil (buf is nil or the seed)
	buf  []byte
	r, w int

	recLeft int
	recType byte
	recLen  int
	hdr     [recordHeaderLen]byte
	hdrHave int

	// The hand-out mode. plain: raw bytes, no framing (plaintext mode).
	// coalesce: the empty-record threshold of CoalesceRecords (0: one
	// record per Read). noBlock: a Reader's follow-up reads, which take
	// only a complete approved record and never the socket.
	plain    bool
	coalesce int
	noBlock  bool
}

// init prepares the read-ahead with buffers from pool and preloads it with
// seed, which the read-ahead keeps (the caller must not use it afterwards)
// until its last byte is handed out.
func (ra *readAhead) init(pool *bufPool, seed []byte) {
	*ra = readAhead{pool: pool}
	if len(seed) > 0 {
		ra.buf, ra.w = seed, len(seed)
	}
}

// buffered returns the number of bytes read from the socket and not yet
// handed out.
func (ra *readAhead) buffered() int { return ra.w - ra.r }

// hand copies into p what one Read hands out, and returns how many bytes
// (0 when nothing may be handed out without reading the socket). It is the
// one hand-out rule:
//   - plaintext: whatever is buffered;
//   - passthrough: the buffered bytes of the current record (or of the next
//     one, of any type), never past its end; a header cut short is handed
//     as it is, since a byte stream must not wait for bytes nobody asked for;
//   - with coalesce > 0, after that record, the records that follow while
//     their header is buffered, they are application data longer than the
//     threshold (so never an empty record or another type: an alert or a
//     renegotiation is seen only after the data before it) and their header
//     fits in p, the last one possibly in part;
//   - with noBlock, nothing unless the current or next record is such a
//     record and complete.
func (ra *readAhead) hand(p []byte) int {
	if ra.plain {
		n := copy(p, ra.buf[ra.r:ra.w])
		ra.r += n
		ra.release()
		return n
	}
	if ra.noBlock && !ra.readyRecord(ra.coalesce) {
		return 0
	}
	n := ra.readRecord(p)
	for ra.coalesce > 0 && n+recordHeaderLen < len(p) && ra.r < ra.w && ra.dataRecord(ra.coalesce) {
		n += ra.readRecord(p[n:])
	}
	return n
}

// readRecord copies buffered bytes of the current record into p, never
// past its end, and returns how many. At a record boundary with fewer than
// 5 bytes buffered it hands those out and keeps them as the start of the
// header.
func (ra *readAhead) readRecord(p []byte) int {
	var n int
	if ra.startRecord() {
		n = copy(p, ra.buf[ra.r:ra.r+min(ra.w-ra.r, ra.recLeft)])
		ra.recLeft -= n
	} else {
		n = copy(p, ra.buf[ra.r:ra.w])
		ra.hdrHave += copy(ra.hdr[ra.hdrHave:], ra.buf[ra.r:ra.r+n])
	}
	ra.r += n
	ra.release()
	return n
}

// startRecord makes the record at r current if none is and its header is
// known (buffered, or partly handed out already and the rest buffered). It
// reports whether a record is current.
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

// dataRecord reports whether the current record, or the next one if none
// is current, has a known header of type application data with a length
// field above minLen.
func (ra *readAhead) dataRecord(minLen int) bool {
	return ra.startRecord() && ra.recType == recordTypeApplicationData && ra.recLen > minLen
}

// readyRecord is dataRecord for a record whose rest is buffered in full.
func (ra *readAhead) readyRecord(minLen int) bool {
	return ra.dataRecord(minLen) && ra.w-ra.r >= ra.recLeft
}

// release drops the buffer once every byte in it was handed out, giving a
// pooled one back.
func (ra *readAhead) release() {
	if ra.r != ra.w {
		return
	}
	if ra.bufp != nil {
		ra.pool.put(ra.bufp)
	}
	ra.bufp, ra.buf, ra.r, ra.w = nil, nil, 0, 0
}

// drop discards what is buffered and gives the buffer back (see Conn.Close).
func (ra *readAhead) drop() {
	ra.r = ra.w
	ra.release()
}

// space takes a buffer from the pool for the next socket read and returns
// it. Conn.fill calls it only when nothing is buffered (buf is nil), so a
// Read never waits while it could hand out bytes, and what is buffered is
// bounded by the buffer's size; the read goes to commit.
func (ra *readAhead) space() []byte {
	ra.bufp = ra.pool.get()
	ra.buf = *ra.bufp
	return ra.buf
}

// commit takes in the result of a read into space. Data that comes with an
// error is kept and the error dropped (the socket reports it again on the
// next call); a read of 0 bytes without an error returns nil, and the
// caller reads again.
func (ra *readAhead) commit(n int, err error) error {
	if n < 0 || n > len(ra.buf) {
		n, err = 0, io.ErrShortBuffer
	}
	ra.w = n
	ra.release()
	if n > 0 {
		return nil
	}
	return err
}
