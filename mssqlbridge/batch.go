package mssqlbridge

import (
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tdsbridge/tdsbridge/tds"
)

// batchSize bounds what a batch holds: at most one socket write per 60 KiB of a message. Not
// 64 KiB: Linux sends at most 64 KiB per packet on loopback, headers included, so a 64 KiB write
// leaves as two packets and wakes the peer twice (docs/design.md, "Batches of 60 KiB, not 64",
// has how that was seen and what it cost).
const batchSize = 60 << 10

// batch joins the socket writes of one TDS message into fewer, larger ones. go-mssqldb writes
// every packet as soon as it is full, so a message of many packets (an RPC with a large
// parameter, a bulk load) would cost one system call per packet. While the driver writes a
// packet that its message continues after (conn.Write sets hold, see continues), what the
// layers below make of it (one TLS record in full encryption, the packet itself in
// plaintext) is held here, and written together with the bytes of the packet that ends the
// message, or when batchSize would be passed. So a message costs one system call per 60 KiB
// at the price of one copy of the bytes held back. Records are never merged or split: each
// TDS packet stays one TLS record (docs/protocol.md, "Record sizes"); only their system calls
// are shared.
//
// The invariant is that nothing is held once a message is complete: hold is set only for a
// whole packet of a client message that goes on, and the packet with EOM in its status
// (MS-TDS 2.2.3.1.2), which ends every message, is written together with what is held. So the
// server has every message the driver finished, and the driver never waits for an answer to
// bytes still here. Bytes written while hold is clear (the PRELOGIN exchange, the handshake,
// alerts, anything that is not such a packet) are written at once, after what is held.
//
// Errors: bytes held are reported written; an error writing them is returned by the write
// that sends them, as with a bufio.Writer, and is sticky: part of them may have reached the
// socket, so every later write returns it too and no caller can retry into a stream with a
// gap or a repeat in it (crypto/tls keeps such an error as well; in plaintext only this does).
// At Close, what is held goes out ahead of the TLS close_notify in full encryption and is
// dropped in plaintext: either way the message was not finished, and the server discards an
// unfinished message with the connection.
//
// Memory and concurrency: the buffer comes from a pool when bytes are held and goes back when
// they are written, so an idle connection holds none. hold is set by conn.Write under its wmu;
// write runs only inside the socket's Write, which the bridge calls one at a time.
type batch struct {
	hold atomic.Bool
	bufp *[]byte // bytes held back; nil when none
	err  error   // the first error writing held bytes; sticky
}

var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, batchSize); return &b }}

// continues reports whether p is a whole TDS packet of a client message that goes on in a
// later packet: a header whose length is len(p), a type a client sends in several packets,
// and no EOM. It reads the three fields in place, since tds.ParseHeader is not inlined and this
// runs on every Write (docs/design.md, "Reading a packet header in place").
func continues(p []byte) bool {
	if len(p) < tds.HeaderSize || int(binary.BigEndian.Uint16(p[2:4])) != len(p) ||
		tds.Status(p[1])&tds.StatusEOM != 0 {
		return false
	}
	switch tds.PacketType(p[0]) {
	case tds.TypeSQLBatch, tds.TypeRPC, tds.TypeBulkLoad, tds.TypeTransactionManager, tds.TypeLogin7:
		return true
	}
	return false
}

// passes reports whether the next write goes to the socket as it is, without the batch: nothing
// is held, and the packet being written is not to be held either (hold is clear).
func (b *batch) passes() bool { return b.bufp == nil && !b.hold.Load() && b.err == nil }

// write writes p to w, or holds it (see batch). p is never retained.
func (b *batch) write(w io.Writer, p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	held := 0
	if b.bufp != nil {
		held = len(*b.bufp)
	}
	if held > 0 && held+len(p) > batchSize {
		if err := b.flush(w); err != nil {
			return 0, err
		}
		held = 0
	}
	hold := b.hold.Load()
	if held == 0 && (!hold || len(p) > batchSize/2) {
		return w.Write(p) // nothing to join it with
	}
	if b.bufp == nil {
		b.bufp = batchBufs.Get().(*[]byte)
	}
	*b.bufp = append(*b.bufp, p...)
	if !hold {
		if err := b.flush(w); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes what is held in one Write and gives the buffer back. An error is kept in b.err.
func (b *batch) flush(w io.Writer) error {
	bp := b.bufp
	b.bufp = nil
	_, err := w.Write(*bp)
	*bp = (*bp)[:0]
	batchBufs.Put(bp)
	if err != nil {
		b.err = err
	}
	return err
}
