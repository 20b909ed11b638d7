package bridge

import (
	"crypto/tls"
	"errors"
)

// defaultMaxRead is the most a Reader returns from one Read when NewReader
// is given a maxRead of 0. (It bounds one Read of the Reader; the bridge's
// own buffer is Options.ReadAheadSize.)
const defaultMaxRead = 16 << 10

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

// Reader reads from a tls.Conn that runs on a bridge Conn and returns the
// plaintext of several records per Read, for TDS clients that read in
// large chunks. It puts the Conn in CoalesceRecords mode, makes one Read of
// the tls.Conn, which may block, then keeps reading into the same buffer
// while the bridge can serve without the socket: the records the tls.Conn
// holds already, then complete application-data records above the
// empty-record threshold of the negotiated version and suite (the
// no-block mode of the Conn's read-ahead; see readAhead.hand). So one Read
// returns many small records at the cost of one socket read.
//
// A Read stops in front of any other record type (handshake, alert,
// change_cipher_spec), so that e.g. close_notify is processed only after
// the data before it was returned. If a record fails in the middle of a
// Read (a bad record MAC, close_notify in TLS 1.3), the bytes before it are
// returned with a nil error and the error on the next call. A Read never returns
// more than len(p) and never more than the maxRead.
//
// TLS 1.3 caveat: every encrypted TLS 1.3 record has the outer type 0x17,
// so post-handshake messages (NewSessionTicket, KeyUpdate) and alerts look
// like data until decrypted: a Read may process a session ticket or a
// KeyUpdate (crypto/tls handles them inside Read as usual), and a
// close_notify ends it, with io.EOF on the next call.
//
// Reader is the only reader of the tls.Conn while in use and is not safe
// for concurrent use; writes on the tls.Conn may run concurrently. It does
// not own p beyond the call. Before passthrough mode it behaves as the
// tls.Conn's own Read; once it has read in passthrough mode the Conn stays
// in passthrough (see CoalesceRecords).
type Reader struct {
	tc      *tls.Conn
	b       *Conn
	maxRead int
	on      bool  // the Conn is in CoalesceRecords mode
	err     error // error from the middle of the last Read, returned by the next call
}

// NewReader returns a coalescing Reader over tc, which must be a tls.Conn
// whose underlying conn is b. maxRead bounds what one Read returns; 0 or
// less means 16 KiB.
func NewReader(tc *tls.Conn, b *Conn, maxRead int) *Reader {
	if maxRead <= 0 {
		maxRead = defaultMaxRead
	}
	return &Reader{tc: tc, b: b, maxRead: maxRead}
}

// Read reads at least one byte unless it fails: one Read of the tls.Conn
// that may block, then as many more as the bridge can serve without
// blocking (see Reader). It returns at most min(len(p), maxRead) bytes.
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

// setNoBlock turns the no-block mode of the read-ahead on or off. Only a
// Reader, between its Reads of the tls.Conn, calls it.
func (c *Conn) setNoBlock(on bool) {
	c.rmu.Lock()
	c.ra.noBlock = on
	c.rmu.Unlock()
}
