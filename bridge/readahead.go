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
// Buffer ownership: buf is nil while nothing is buffered, so an idle
// connection holds no buffer. A read that needs the socket takes a buffer
// of the configured size from pool (fill), and the read that hands out
// its last byte gives it back (release). Right after the handshake buf may
// instead be the seed, the unread rest of the peer's last handshake
// message, which is served as it is and dropped when drained: the buffer
// taken from the pool afterwards still has the configured size, whatever
// the peer sent during the handshake. A Read that waits on the socket
// holds its buffer while it waits.
//
// In record mode (passthrough) it tracks TLS record boundaries: recLeft is
// the number of bytes of the current record (the one whose header is at or
// before r) still to be handed out; 0 means r is at a record boundary, or
// inside a header of which fewer than 5 bytes have arrived (hdrHave).
// recType and recLen (the header's length field) describe the current
// record while recLeft > 0. readRecord never crosses a record boundary;
// outside the coalescing modes (see Conn.readPassthrough) the TLS layer
// therefore holds at most one record and everything after it stays here,
// where readyRecord can inspect it.
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
	// hdr holds the header of the next record while only hdrHave (< 5) of
	// its bytes have been handed out and recLeft is 0.
	hdr     [recordHeaderLen]byte
	hdrHave int
}

// init prepares the read-ahead with buffers from pool and preloads it with
// seed (bytes that arrived before the switch, e.g. the rest of the last
// handshake message). The read-ahead keeps seed, which the caller must not
// use afterwards, until its last byte is handed out.
func (ra *readAhead) init(pool *bufPool, seed []byte) {
	ra.pool = pool
	ra.bufp, ra.buf, ra.r, ra.w = nil, nil, 0, 0
	if len(seed) > 0 {
		ra.buf, ra.w = seed, len(seed)
	}
	ra.resetRecords()
}

// buffered returns the number of bytes read from the socket and not yet
// handed out.
func (ra *readAhead) buffered() int { return ra.w - ra.r }

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

// fill makes one Read on src into the free space of the buffer (see free
// and commit).
func (ra *readAhead) fill(src io.Reader) error {
	free, err := ra.free()
	if err != nil {
		return err
	}
	n, err := src.Read(free)
	return ra.commit(n, err)
}

// free returns the free space of the buffer, where the next socket read
// goes, first taking a buffer from the pool if it has none (or only the
// seed), or compacting it so that a whole record fits behind the unread
// bytes. Callers read the socket only when fewer bytes than a whole record
// are buffered (passthrough and plaintext mode: only when none are), and
// follow the read with commit.
func (ra *readAhead) free() ([]byte, error) {
	ra.release()
	if ra.bufp == nil {
		bp := ra.pool.get()
		if ra.w-ra.r > len(*bp)-maxRecordLen {
			ra.pool.put(bp)
			return nil, io.ErrShortBuffer
		}
		ra.w = copy(*bp, ra.buf[ra.r:ra.w])
		ra.r = 0
		ra.bufp, ra.buf = bp, *bp
	} else if ra.r > 0 && len(ra.buf)-ra.w < maxRecordLen {
		ra.w = copy(ra.buf, ra.buf[ra.r:ra.w])
		ra.r = 0
	}
	return ra.buf[ra.w:], nil
}

// commit takes in the result of a read into the space free returned: n
// bytes and err. A read that returns data together with an error keeps
// the data and drops the error: the socket reports it again on the next
// call. A read of 0 bytes without an error returns nil: the caller tries
// again.
func (ra *readAhead) commit(n int, err error) error {
	if n < 0 || n > len(ra.buf)-ra.w {
		ra.release()
		return io.ErrShortBuffer
	}
	ra.w += n
	ra.release()
	if n > 0 {
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
		ra.release()
		return n
	}
	n := min(ra.w-ra.r, ra.recLeft)
	n = copy(p, ra.buf[ra.r:ra.r+n])
	ra.r += n
	ra.recLeft -= n
	ra.release()
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

// startedData reports whether the header of the current record, or of the
// next one if none is current, is known, says application data and has a
// length field above minLen; unlike readyRecord the record need not be
// buffered in full.
func (ra *readAhead) startedData(minLen int) bool {
	return ra.startRecord() && ra.recType == recordTypeApplicationData && ra.recLen > minLen
}

// readRaw copies buffered bytes into p without regard to records.
func (ra *readAhead) readRaw(p []byte) int {
	n := copy(p, ra.buf[ra.r:ra.w])
	ra.r += n
	ra.release()
	return n
}

// walk follows the record framing through p, bytes read straight from the
// socket with nothing buffered, as readRecord and Conn.handExtra would hand
// them out: first the current record (or the next one, of any type, or as
// much of its header as p holds), then the records that follow while
// their header is in p, they are application data and their length field
// is above minLen, the last one possibly in part. It returns how many
// bytes of p are handed out (the framing state then stands after them)
// and how many records it began beyond the first.
func (ra *readAhead) walk(p []byte, minLen int) (n, extra int) {
	for first := true; n < len(p); first = false {
		if ra.recLeft == 0 {
			need := recordHeaderLen - ra.hdrHave
			if len(p)-n < need {
				if first {
					ra.hdrHave += copy(ra.hdr[ra.hdrHave:], p[n:])
					n = len(p)
				}
				break
			}
			var hdr [recordHeaderLen]byte
			copy(hdr[:], ra.hdr[:ra.hdrHave])
			copy(hdr[ra.hdrHave:], p[n:n+need])
			recLen := int(hdr[3])<<8 | int(hdr[4])
			if !first && (hdr[0] != recordTypeApplicationData || recLen <= minLen) {
				break
			}
			if !first {
				extra++
			}
			ra.hdr, ra.hdrHave = hdr, 0
			ra.recType, ra.recLen, ra.recLeft = hdr[0], recLen, need+recLen
		}
		k := min(ra.recLeft, len(p)-n)
		n += k
		ra.recLeft -= k
	}
	return n, extra
}

// keep buffers tail, bytes read straight from the socket that a Read does
// not hand out, in a buffer from the pool, to be served next. Called with
// nothing buffered and len(tail) at most the pool's buffer size.
func (ra *readAhead) keep(tail []byte) {
	ra.bufp = ra.pool.get()
	ra.buf = *ra.bufp
	ra.r, ra.w = 0, copy(ra.buf, tail)
}
