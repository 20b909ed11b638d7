package wiretest

import (
	"bytes"
	"context"
	"sync"
	"unicode/utf16"

	"github.com/tdsbridge/tdsbridge/internal/login7pw"
)

// maxRecorded bounds what a Session records per direction; the proxy keeps forwarding beyond
// it, and Truncated reports that the recording stopped.
const maxRecorded = 16 << 20

// Session is the recording of one connection through a Proxy: per direction, every byte the
// sender wrote (Sent), the units they were framed into (Units) and every byte the proxy wrote to
// the receiver (Delivered). Its methods may be called while the connection runs; they return
// copies.
type Session struct {
	id        int // the connection's place in accept order, from 1
	mu        sync.Mutex
	sent      [2][]byte
	delivered [2][]byte
	units     [2][]Unit
	truncated bool
	err       error
	done      chan struct{}
}

func (s *Session) record(dir Direction, u Unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sent[dir])+len(u.Bytes) > maxRecorded {
		s.truncated = true
		return
	}
	s.sent[dir] = append(s.sent[dir], u.Bytes...)
	s.units[dir] = append(s.units[dir], Unit{Kind: u.Kind, Index: u.Index, Bytes: clone(u.Bytes)})
}

func (s *Session) deliver(dir Direction, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.delivered[dir])+len(b) > maxRecorded {
		s.truncated = true
		return
	}
	s.delivered[dir] = append(s.delivered[dir], b...)
}

func (s *Session) setErr(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// Err returns the error that kept the session from starting (the target refused), or nil.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Sent returns the bytes the sender of direction dir wrote, as the proxy read them.
func (s *Session) Sent(dir Direction) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.sent[dir])
}

// Delivered returns the bytes the proxy wrote to the receiver of direction dir (after the
// Tamper), including bytes a Verdict sent Back in the other direction.
func (s *Session) Delivered(dir Direction) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.delivered[dir])
}

// Units returns the units read in direction dir, with their original bytes.
func (s *Session) Units(dir Direction) []Unit {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Unit, len(s.units[dir]))
	copy(out, s.units[dir])
	return out
}

// Truncated reports whether the recording stopped at its size limit.
func (s *Session) Truncated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated
}

// Wait blocks until both directions of the session have ended or ctx is done.
func (s *Session) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ClearTDSTypes returns the TDS packet types, in order, of the units of direction dir that
// crossed in the clear (framed as TDS packets, not inside TLS records).
func (s *Session) ClearTDSTypes(dir Direction) []byte {
	var ts []byte
	for _, u := range s.Units(dir) {
		if u.Kind == UnitTDS {
			ts = append(ts, u.Type())
		}
	}
	return ts
}

// PasswordForms returns the two forms a password takes in a LOGIN7 message: UTF-16LE as
// typed, and TDS-obfuscated (each byte's nibbles swapped, then XOR 0xA5; MS-TDS 2.2.6.4).
func PasswordForms(password string) (plain, obfuscated []byte) {
	for _, r := range utf16.Encode([]rune(password)) {
		plain = append(plain, byte(r), byte(r>>8))
	}
	return plain, login7pw.Obfuscate(plain)
}

// ContainsPassword reports whether b holds password in either of its LOGIN7 forms.
func ContainsPassword(b []byte, password string) bool {
	plain, obf := PasswordForms(password)
	return bytes.Contains(b, plain) || bytes.Contains(b, obf)
}
