package prelogin

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: Decode never panics; a payload it accepts encodes (unless the canonical form would
// exceed 65535 bytes, possible only for inputs longer than that), decodes back to an equal
// Message, and the canonical encoding is a fixed point. A payload it rejects gets a
// *FormatError, and EncryptionOf rejects it with the same error.
func FuzzDecode(f *testing.F) {
	f.Add(clientVector)
	f.Add(server2008Vector)
	f.Add(fullClientVector)
	f.Add(term)
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := clone(data)
		var m Message
		err := m.Decode(data)
		if !bytes.Equal(data, orig) {
			t.Fatalf("Decode modified its input")
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode error %T %v is not a *FormatError", err, err)
			}
			if _, err2 := EncryptionOf(data); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("EncryptionOf error %v, Decode error %v", err2, err)
			}
			return
		}
		out, err := m.Encode(nil)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) || len(data) <= maxPayload {
				t.Fatalf("Encode of a decoded %d-byte payload: %v", len(data), err)
			}
			return
		}
		if len(out) > len(data) {
			t.Fatalf("canonical form (%d bytes) longer than the input (%d)", len(out), len(data))
		}
		var back Message
		if err := back.Decode(out); err != nil {
			t.Fatalf("Decode(Encode(m)): %v\n% x", err, out)
		}
		if !back.Equal(&m) || !m.Equal(&back) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", back, m)
		}
		again, err := back.Encode(nil)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("canonical form is not a fixed point:\n% x\n% x", again, out)
		}
		if e, err := EncryptionOf(data); m.HasEncryption && (err != nil || e != m.Encryption) ||
			!m.HasEncryption && !errors.Is(err, ErrNoEncryptionOption) {
			t.Fatalf("EncryptionOf = %v, %v; Decode says %v (present %v)", e, err, m.Encryption, m.HasEncryption)
		}
	})
}

// FuzzSetEncryption: SetEncryption accepts exactly what Decode accepts (and has ENCRYPTION),
// changes at most the one ENCRYPTION byte, returns the old value, and leaves rejected payloads
// untouched.
func FuzzSetEncryption(f *testing.F) {
	f.Add(clientVector, byte(EncryptNotSup))
	f.Add(server2008Vector, byte(EncryptOff))
	f.Add(fullClientVector, byte(EncryptOn|EncryptClientCertBit))
	f.Add(term, byte(EncryptOn))
	f.Fuzz(func(t *testing.T, data []byte, e byte) {
		orig := clone(data)
		var m Message
		derr := m.Decode(orig)
		old, err := SetEncryption(data, Encryption(e))
		switch {
		case derr != nil:
			if err == nil || err.Error() != derr.Error() {
				t.Fatalf("SetEncryption error %v, Decode error %v", err, derr)
			}
		case !m.HasEncryption:
			if !errors.Is(err, ErrNoEncryptionOption) {
				t.Fatalf("SetEncryption error %v, want ErrNoEncryptionOption", err)
			}
		case err != nil:
			t.Fatalf("SetEncryption: %v on a payload Decode accepts", err)
		}
		if err != nil {
			if !bytes.Equal(data, orig) {
				t.Fatalf("SetEncryption modified a payload it rejected")
			}
			return
		}
		if old != m.Encryption {
			t.Fatalf("old value %v, Decode says %v", old, m.Encryption)
		}
		changed := 0
		for i := range data {
			if data[i] != orig[i] {
				changed++
			}
		}
		if changed > 1 || changed == 1 && old == Encryption(e) {
			t.Fatalf("SetEncryption changed %d bytes (old %v, new %v)", changed, old, Encryption(e))
		}
		var after Message
		if err := after.Decode(data); err != nil {
			t.Fatalf("Decode after SetEncryption: %v", err)
		}
		m.Encryption = Encryption(e)
		if !after.Equal(&m) && m.Equal(&m) {
			t.Fatalf("after SetEncryption: %+v, want %+v", after, m)
		}
	})
}

// FuzzReplyEncryption: the client's check of a reply never panics, ReplyEncryptionOf and
// SetReplyEncryption agree, a refused reply is left untouched, and an accepted one has exactly
// its ENCRYPTION byte (after the table) replaced. The check accepts every payload EncryptionOf
// accepts, and every payload go-mssqldb v1.11.2 accepts (driverReads) except for the refusals
// the package documentation gives a reason for; go-mssqldb then reads the patched reply as the
// new value.
func FuzzReplyEncryption(f *testing.F) {
	f.Add(babelfish(nil), byte(EncryptNotSup))
	f.Add(server2008Vector, byte(EncryptNotSup))
	f.Add(fullClientVector, byte(EncryptOff))
	f.Add(term, byte(EncryptOn))
	f.Fuzz(func(t *testing.T, data []byte, e byte) {
		orig := clone(data)
		got, err := ReplyEncryptionOf(data)
		old, serr := SetReplyEncryption(data, Encryption(e))
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() || err == nil && old != got {
			t.Fatalf("ReplyEncryptionOf = %v, %v; SetReplyEncryption = %v, %v", got, err, old, serr)
		}
		if strict, serr := EncryptionOf(orig); serr == nil && (err != nil || got != strict) {
			t.Fatalf("EncryptionOf accepts %v, the reply check says %v, %v", strict, got, err)
		}
		_, driverOK := driverReads(orig)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError", err, err)
			}
			if !bytes.Equal(data, orig) {
				t.Fatalf("SetReplyEncryption modified a reply it refused")
			}
			documented := fe.Token == TokenEncryption && (fe.Err == ErrDuplicateOption || fe.Err == ErrOptionLength || fe.Err == ErrOptionBounds) ||
				fe.Err == ErrOptionOverlap && fe.Other == TokenEncryption ||
				fe.Err == ErrOptionBounds && fe.Token == TokenTraceID
			if driverOK && !documented {
				t.Fatalf("go-mssqldb accepts the reply, the check refuses it: %v", err)
			}
			return
		}
		at, changed := -1, 0
		for i := range data {
			if data[i] != orig[i] {
				at, changed = i, changed+1
			}
		}
		end := 0 // the terminator's offset
		for Token(orig[end]) != TokenTerminator {
			end += EntrySize
		}
		if changed > 1 || changed == 1 && (old == Encryption(e) || at <= end) {
			t.Fatalf("SetReplyEncryption changed %d bytes, the last at %d (old %v, new %v)", changed, at, old, Encryption(e))
		}
		if now, err := ReplyEncryptionOf(data); err != nil || now != Encryption(e) {
			t.Fatalf("ReplyEncryptionOf after SetReplyEncryption = %v, %v; want %v", now, err, Encryption(e))
		}
		if enc, ok := driverReads(data); driverOK && (!ok || enc != Encryption(e)) {
			t.Fatalf("go-mssqldb reads the patched reply as %v, %v; want %v", enc, ok, Encryption(e))
		}
	})
}
