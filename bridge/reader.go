package bridge

import (
	"crypto/tls"
	"errors"
)

// defaultMaxRead is NewReader's maxRead when given 0 or less.
const defaultMaxRead = 16 << 10

// Empty-record thresholds: the largest length field an empty application-data record can have
// (docs/protocol.md, "crypto/tls facts"); records at or below it are not coalesced.
const (
	// emptyTLS13: 1 byte of inner content type + a 16-byte AEAD tag.
	emptyTLS13 = 17
	// emptyTLS12GCM: an 8-byte explicit nonce + a 16-byte tag.
	emptyTLS12GCM = 24
	// emptyTLS12ChaCha: a 16-byte tag (the nonce is implicit).
	emptyTLS12ChaCha = 16
	// emptyOther covers every other suite crypto/tls negotiates: CBC with HMAC-SHA256 is a
	// 16-byte IV + 48 bytes (32-byte MAC and padding to the block); the others are smaller.
	emptyOther = 64
)

// Reader reads a tls.Conn that runs on a bridge [Conn] and returns the plaintext of several
// records per Read, for TDS clients that read in large chunks: one Read of the tls.Conn, which
// may block, then more while the bridge can serve complete application-data records without the
// socket ([Conn.CoalesceRecords]), so many small records cost one socket read.
//
// A Read stops in front of any other record type, so that close_notify is processed only after
// the data before it. If a record fails in the middle of a Read (a bad record MAC), the bytes
// before it are returned with a nil error and the error on the next call. In TLS 1.3 every record
// looks like data until decrypted: a Read may process a session ticket or a KeyUpdate, and
// close_notify ends it, with [io.EOF] on the next call.
//
// Reader is the only reader of the tls.Conn while in use and is not safe for concurrent use;
// writes on the tls.Conn may run concurrently. It keeps no reference to p. Before passthrough it
// reads as the tls.Conn does; once it has read in passthrough the Conn stays in passthrough.
type Reader struct {
	tc      *tls.Conn
	b       *Conn
	maxRead int
	on      bool  // the Conn is in CoalesceRecords mode
	err     error // error from the middle of the last Read, returned by the next call
}

// NewReader returns a Reader over tc, whose underlying conn must be b; maxRead bounds what one
// Read returns, 16 KiB when 0 or less.
func NewReader(tc *tls.Conn, b *Conn, maxRead int) *Reader {
	if maxRead <= 0 {
		maxRead = defaultMaxRead
	}
	return &Reader{tc: tc, b: b, maxRead: maxRead}
}

// Read returns at least one byte unless it fails, and at most min(len(p), maxRead).
func (r *Reader) Read(p []byte) (int, error) {
	if err := r.err; err != nil {
		r.err = nil
		return 0, err
	}
	p = p[:min(len(p), r.maxRead)]
	if !r.on {
		cs := r.tc.ConnectionState()
		r.on = cs.HandshakeComplete && r.b.CoalesceRecords(cs) == nil
	}
	n, err := r.tc.Read(p)
	if err != nil || !r.on {
		return n, err
	}
	r.b.setNoBlock(true)
	for n < len(p) {
		m, err := r.tc.Read(p[n:])
		n += m
		if err != nil {
			if !errors.Is(err, errWouldBlock) {
				r.err = err
			}
			break
		}
	}
	r.b.setNoBlock(false)
	return n, nil
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

// setNoBlock turns the read-ahead's no-block mode on or off for a Reader's follow-up reads.
func (c *Conn) setNoBlock(on bool) {
	c.rmu.Lock()
	c.ra.noBlock = on
	c.rmu.Unlock()
}
