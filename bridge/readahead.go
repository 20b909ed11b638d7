package bridge

import "io"

// TLS record layer constants (RFC 5246 section 6.2, RFC 8446 section 5).
const (
	recordHeaderLen = 5
	// maxRecordLen is the largest record crypto/tls accepts: header and 2^14+2048 bytes.
	maxRecordLen = recordHeaderLen + 16384 + 2048

	recordTypeApplicationData = 0x17
)

// DefaultReadAheadSize is the smallest read-ahead buffer (see [Options.ReadAheadSize]).
const DefaultReadAheadSize = 64 << 10

// readAhead is the one buffer between the socket and the layer above in passthrough and
// plaintext: buf[r:w] holds bytes read and not yet handed out. All fields are protected by
// Conn.rmu.
//
// Ownership: buf is nil while nothing is buffered; space takes a buffer from pool and the
// hand-out of its last byte gives it back (release). Right after the handshake buf may be the
// seed, the unread rest of the peer's last handshake message, dropped when drained. A Read that
// waits on the socket holds its buffer while it waits.
//
// Framing (passthrough): recLeft counts the bytes of the current record still to hand out; 0
// means r is at a record boundary or inside a header of which hdrHave (< 5) bytes, kept in hdr,
// were handed out. recType and recLen (the length field) describe the record while recLeft > 0.
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

	// The hand-out mode (see hand); coalesce is CoalesceRecords' threshold, or 0.
	plain    bool
	coalesce int
	noBlock  bool
}

// init resets the read-ahead to buffers from pool and preloads it with seed, which it owns from
// now on.
func (ra *readAhead) init(pool *bufPool, seed []byte) {
	*ra = readAhead{pool: pool}
	if len(seed) > 0 {
		ra.buf, ra.w = seed, len(seed)
	}
}

// buffered returns the number of bytes read and not yet handed out.
func (ra *readAhead) buffered() int { return ra.w - ra.r }

// hand copies into p what one Read hands out and returns how many bytes (0 when nothing can go
// without reading the socket). It is the one hand-out rule:
//   - plaintext: whatever is buffered;
//   - passthrough: the buffered bytes of the current or next record, of any type, never past its
//     end; a header cut short goes as it is (a stream must not wait for bytes nobody asked for);
//   - with coalesce > 0, then the records that follow while their header is buffered and fits
//     in p and they are application data longer than the threshold (so an alert is seen only
//     after the data before it), the last one possibly in part;
//   - with noBlock, nothing unless the current or next record is such a record and complete.
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

// readRecord copies buffered bytes of the current record into p, never past its end, and returns
// how many; a header cut short is handed out and kept in hdr.
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

// startRecord makes the record at r current if none is and its header is known (in hdr and
// buf), and reports whether a record is current.
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

// dataRecord reports whether the current or next record is known to be application data with a
// length field above minLen.
func (ra *readAhead) dataRecord(minLen int) bool {
	return ra.startRecord() && ra.recType == recordTypeApplicationData && ra.recLen > minLen
}

// readyRecord is dataRecord for a record whose rest is buffered in full.
func (ra *readAhead) readyRecord(minLen int) bool {
	return ra.dataRecord(minLen) && ra.w-ra.r >= ra.recLeft
}

// release drops the buffer once every byte in it was handed out, giving a pooled one back.
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

// space takes a buffer from the pool for the next socket read, whose result goes to commit.
// Conn.fill calls it only when nothing is buffered, so what is buffered is bounded by its size.
func (ra *readAhead) space() []byte {
	ra.bufp = ra.pool.get()
	ra.buf = *ra.bufp
	return ra.buf
}

// commit takes in the result of a read into space. Data that comes with an error is kept and the
// error dropped (the socket reports it again); 0 bytes without an error return nil.
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
