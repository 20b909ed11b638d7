package tdstest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// errTruncated is wrapped when a peer's message ends inside a field.
var errTruncated = errors.New("message ends inside a field")

// wireReader reads little-endian fields of a peer's message from a bufio.Reader and counts the
// offset, for error messages. Slices returned by bytes alias an internal buffer that the next
// call reuses. The first error is sticky.
type wireReader struct {
	r   *bufio.Reader
	off int64 // bytes consumed so far
	buf []byte
	err error
}

func newWireReader(r io.Reader) *wireReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 16<<10)
	}
	return &wireReader{r: br}
}

func (w *wireReader) fail(err error) error {
	if w.err == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w (offset %d)", errTruncated, w.off)
		}
		w.err = err
	}
	return w.err
}

// atEOF reports whether the message has no more bytes.
func (w *wireReader) atEOF() bool {
	if w.err != nil {
		return false
	}
	_, err := w.r.Peek(1)
	return errors.Is(err, io.EOF)
}

func (w *wireReader) byte() (byte, error) {
	if w.err != nil {
		return 0, w.err
	}
	b, err := w.r.ReadByte()
	if err != nil {
		return 0, w.fail(err)
	}
	w.off++
	return b, nil
}

// bytes reads n bytes (n bounded by the caller) into the internal buffer.
func (w *wireReader) bytes(n int) ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if cap(w.buf) < n {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	k, err := io.ReadFull(w.r, b)
	w.off += int64(k)
	if err != nil {
		return nil, w.fail(err)
	}
	return b, nil
}

// appendBytes appends n bytes to dst, reading in pieces so that a lying length costs no memory
// beyond what the stream really holds.
func (w *wireReader) appendBytes(dst []byte, n int64) ([]byte, error) {
	for n > 0 {
		k := int(min(n, 32<<10))
		b, err := w.bytes(k)
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
		n -= int64(k)
	}
	return dst, nil
}

// skip discards n bytes.
func (w *wireReader) skip(n int64) error {
	if w.err != nil {
		return w.err
	}
	k, err := w.r.Discard(int(min(n, 1<<30)))
	w.off += int64(k)
	if err != nil {
		return w.fail(err)
	}
	if int64(k) < n {
		return w.skip(n - int64(k))
	}
	return nil
}

func (w *wireReader) uint16() (uint16, error) {
	b, err := w.bytes(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (w *wireReader) uint32() (uint32, error) {
	b, err := w.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (w *wireReader) uint64() (uint64, error) {
	b, err := w.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// bVarChar reads a B_VARCHAR (u8 count of UTF-16 units, then the units).
func (w *wireReader) bVarChar() (string, error) {
	n, err := w.byte()
	if err != nil {
		return "", err
	}
	b, err := w.bytes(2 * int(n))
	if err != nil {
		return "", err
	}
	return ucs2.Decode(b), nil
}
