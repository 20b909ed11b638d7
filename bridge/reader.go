package bridge

import (
	"crypto/tls"
	"errors"
)

// DefaultMaxRead is the most a Reader returns from one Read when NewReader
// is given a maxRead of 0. (It bounds one Read of the Reader; the bridge's
// own buffer is Options.ReadAheadSize.)
const DefaultMaxRead = 16 << 10

// Empty-record thresholds: the largest record length field (L) an empty
// application-data record can have (docs/protocol.md, section
// "crypto/tls facts"). Records with
// L at or below the threshold are not coalesced.
const (
	// emptyTLS13 is 1 byte of inner content type + a 16-byte AEAD tag.
	emptyTLS13 = 17
	// emptyTLS12GCM is an 8-byte explicit nonce + a 16-byte tag.
	emptyTLS12GCM = 24
	// emptyTLS12ChaCha is a 16-byte tag (the nonce is implicit).
	emptyTLS12ChaCha = 16
	// emptyOther covers every other suite crypto/tls can negotiate: CBC
	// with HMAC-SHA256 is a 16-byte IV + 48 bytes (32-byte MAC and at
	// least 1 byte of padding, rounded up to the block); HMAC-SHA1 CBC
	// (48), 3DES (32) and RC4 (20) are smaller.
	emptyOther = 64
)

// Reader reads from a tls.Conn that runs on a bridge Conn and coalesces
// records: after one Read of the tls.Conn, which may block, it keeps
// reading into the same buffer while the bridge already holds the next
// record in full, that record is application data (type 0x17), and its
// length is above the empty-record threshold of the negotiated version
// and cipher suite (TLS 1.3: 17; TLS 1.2 AES-GCM: 24; ChaCha20-Poly1305:
// 16; any other suite, e.g. CBC: 64, a bound above the empty record of
// every CBC suite crypto/tls offers). The extra reads run in the bridge's
// no-block mode: they never read the socket and never wait; a record that
// is not complete ends the batch with a temporary "would block" error that
// crypto/tls does not keep. While a Reader reads, the bridge may also hand
// the tls.Conn several such approved records in one call (crypto/tls then
// decrypts them one by one from its own buffer), which saves calls and the
// small allocation crypto/tls makes per read of its underlying conn. So
// one Read returns many small records at the cost of one socket read,
// which is where the speed comes from.
//
// A Read stops in front of any other record type (handshake, alert,
// change_cipher_spec), so that e.g. a TLS 1.2 renegotiation request or
// close_notify is processed only after the data before it was returned.
// If a read fails in the middle of a batch (a bad record MAC, close_notify
// in TLS 1.3), the batch is returned with a nil error and the error on the
// next call. A Read never returns more than len(p) and never more than the
// maxRead.
//
// TLS 1.3 caveat: every encrypted TLS 1.3 record has the outer type 0x17,
// so post-handshake messages (NewSessionTicket, KeyUpdate) and alerts
// (close_notify) look like data until decrypted. A batch may therefore
// process a session ticket or a KeyUpdate (crypto/tls handles them
// inside Read as usual, a KeyUpdate reply being written through the
// bridge), and a close_notify ends the batch with io.EOF returned on the
// next call, after the data before it.
//
// Reader is the only reader of the tls.Conn while in use and is not safe
// for concurrent use by several goroutines; writes on the tls.Conn may run
// concurrently. It does not own p beyond the call. Outside passthrough
// mode (handshake, plaintext) it behaves as the tls.Conn's own Read.
type Reader struct {
	tc      *tls.Conn
	b       *Conn
	maxRead int

	minLen int32 // empty-record threshold; 0 until known
	err    error // error from the middle of a batch, returned by the next call
	// held is the number of whole records the tls.Conn is believed to
	// hold unread in its raw input (handed over by no-block Reads);
	// partial is true when the last Read filled its buffer, so the
	// tls.Conn may still hold plaintext of that record.
	held    int
	partial bool
}

// NewReader returns a coalescing Reader over tc, which must be a tls.Conn
// whose underlying conn is b. maxRead bounds what one Read returns; 0 or
// less means DefaultMaxRead.
func NewReader(tc *tls.Conn, b *Conn, maxRead int) *Reader {
	if maxRead <= 0 {
		maxRead = DefaultMaxRead
	}
	return &Reader{tc: tc, b: b, maxRead: maxRead}
}

// Read reads at least one byte unless it fails: one Read of the tls.Conn
// that may block, then as many more as the bridge can serve without
// blocking (see Reader). It returns at most min(len(p), maxRead) bytes.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		err := r.err
		r.err = nil
		return 0, err
	}
	if len(p) > r.maxRead {
		p = p[:r.maxRead]
	}
	if r.minLen == 0 {
		if cs := r.tc.ConnectionState(); cs.HandshakeComplete {
			r.minLen = emptyRecordLen(cs)
		}
	}
	r.b.steer.coalesce(r.minLen) // 0 until the handshake is done: no batches
	n, err := r.readTLS(p)
	if err != nil || n == len(p) || r.minLen == 0 {
		r.b.steer.coalesce(0)
		return n, err
	}
	for n < len(p) && (r.held > 0 || r.b.recordReady(r.minLen)) {
		r.b.steer.setNoBlock(true)
		m, err := r.readTLS(p[n:])
		r.b.steer.setNoBlock(false)
		n += m
		if err != nil {
			if !errors.Is(err, errWouldBlock) {
				r.err = err
			}
			break
		}
	}
	r.b.steer.coalesce(0)
	return n, nil
}

// readTLS makes one Read of the tls.Conn and keeps count of the records
// the tls.Conn holds in its raw input: when it read the bridge, whatever
// the bridge handed beyond the record being read; when it did not, one
// fewer than before, unless it only returned the rest of a record whose
// beginning an earlier call returned. The count is a hint: too high costs
// one no-block Read that finds nothing, too low ends a batch early; the
// data is right either way.
func (r *Reader) readTLS(q []byte) (int, error) {
	calls := r.b.steer.reads()
	m, err := r.tc.Read(q)
	switch {
	case r.b.steer.reads() != calls:
		r.held = r.b.steer.lastExtra()
	case !r.partial && r.held > 0:
		r.held--
	}
	r.partial = m == len(q)
	return m, err
}

// emptyRecordLen returns the empty-record threshold for a connection.
func emptyRecordLen(cs tls.ConnectionState) int32 {
	if cs.Version == tls.VersionTLS13 {
		return emptyTLS13
	}
	switch cs.CipherSuite {
	case tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_GCM_SHA384:
		return emptyTLS12GCM
	case tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
		return emptyTLS12ChaCha
	}
	return emptyOther
}

// recordReady reports whether the bridge is in passthrough mode and the
// record after what the TLS layer has read is complete in the buffer, is
// application data and is longer than minLen.
func (c *Conn) recordReady(minLen int32) bool {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	return c.State() == StatePassthrough && c.rerr == nil && c.ra.readyRecord(int(minLen))
}
