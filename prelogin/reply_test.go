package prelogin

import (
	"bytes"
	"errors"
	"testing"
)

// babelfishPacket is the whole PRELOGIN reply of Babelfish for PostgreSQL 4.2.0 to a client
// that sent ENCRYPTION=ON and a TRACEID (docs/protocol.md, section "What servers written
// elsewhere send"): it echoes TRACEID with length 0 at the payload's end and sends THREADID
// with length 0.
var babelfishPacket = []byte{
	0x04, 0x01, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, // header: tabular result, EOM, length 48, SPID 0, packet 0, window 0
	0x00, 0x00, 0x1F, 0x00, 0x06, // VERSION: data at 31, 6 bytes
	0x01, 0x00, 0x25, 0x00, 0x01, // ENCRYPTION: data at 37, 1 byte
	0x02, 0x00, 0x26, 0x00, 0x01, // INSTOPT: data at 38, 1 byte
	0x03, 0x00, 0x27, 0x00, 0x00, // THREADID: data at 39, 0 bytes
	0x04, 0x00, 0x27, 0x00, 0x01, // MARS: data at 39, 1 byte
	0x05, 0x00, 0x28, 0x00, 0x00, // TRACEID: data at 40 (the payload's end), 0 bytes
	0xFF,                               // TERMINATOR (offset 30)
	0x0C, 0x00, 0x07, 0xD0, 0x00, 0x00, // VERSION: 12.0, build 2000, sub-build 0
	0x01, // ENCRYPTION: ON
	0x00, // INSTOPT: 0 = instance name matched
	0x00, // MARS: off
}

// babelfishEncryptionAt is the offset of the ENCRYPTION byte in the payload.
const babelfishEncryptionAt = 37

// babelfish returns a copy of the Babelfish reply payload with edit applied (nil: none).
func babelfish(edit func(p []byte) []byte) []byte {
	p := clone(babelfishPacket[8:])
	if edit != nil {
		p = edit(p)
	}
	return p
}

// driverReads says what go-mssqldb v1.11.2 makes of a reply payload, written from reading its
// readPrelogin and interpretPreloginResponse (tds.go): it walks the table to the terminator,
// needing each entry whole with at least one byte after it; it skips TRACEID without looking
// at it; every other option needs its offset inside the payload and its data within it, a
// repeated token replacing the earlier one; FEDAUTHREQUIRED, when present, must be one byte;
// ENCRYPTION must be present, and its first byte is the value (an empty one cannot be read).
// ok is false where go-mssqldb fails the connection.
func driverReads(p []byte) (enc Encryption, ok bool) {
	var encData, fedAuth []byte
	hasEnc, hasFedAuth := false, false
	for pos := 0; ; pos += EntrySize {
		if pos >= len(p) {
			return 0, false
		}
		t := Token(p[pos])
		if t == TokenTerminator {
			break
		}
		if pos+EntrySize >= len(p) {
			return 0, false
		}
		if t == TokenTraceID {
			continue
		}
		off, n := be16(p[pos+1:pos+3]), be16(p[pos+3:pos+5])
		if off >= len(p) || off+n > len(p) {
			return 0, false
		}
		switch t {
		case TokenEncryption:
			encData, hasEnc = p[off:off+n], true
		case TokenFedAuthRequired:
			fedAuth, hasFedAuth = p[off:off+n], true
		}
	}
	if hasFedAuth && len(fedAuth) != 1 || !hasEnc || len(encData) == 0 {
		return 0, false
	}
	return Encryption(encData[0]), true
}

// TestReplyBabelfish: Babelfish's reply negotiates for each encrypt setting of go-mssqldb:
// the client's check accepts it, ClientOutcome decides, and SetReplyEncryption patches it to
// NOT_SUP for a driver whose encryption is off, changing the one byte, in a form go-mssqldb
// still reads. Babelfish answers ON to ON, OFF to OFF and NOT_SUP to NOT_SUP (docs/protocol.md):
// the captured reply with its ENCRYPTION byte set to that answer stands for the other two.
// Decode, the strict reading a server applies to a client's PRELOGIN, refuses the reply: this
// is the error the bridge gave before the reply side was checked apart.
func TestReplyBabelfish(t *testing.T) {
	tests := map[string]struct {
		sent, answer Encryption
		want         Mode
	}{
		"encrypt=disable": {sent: EncryptNotSup, answer: EncryptNotSup, want: ModeNone},
		"encrypt=false":   {sent: EncryptOff, answer: EncryptOff, want: ModeLoginOnly},
		"encrypt=true":    {sent: EncryptOn, answer: EncryptOn, want: ModeFull},
		"encrypt=strict":  {sent: EncryptStrict, answer: EncryptOn, want: ModeStrict},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := babelfish(func(p []byte) []byte { p[babelfishEncryptionAt] = byte(tc.answer); return p })
			orig := clone(p)
			got, err := ReplyEncryptionOf(p)
			if err != nil || got != tc.answer {
				t.Fatalf("ReplyEncryptionOf = %v, %v; want %v", got, err, tc.answer)
			}
			if outcome, err := ClientOutcome(tc.sent, got); err != nil || outcome != tc.want {
				t.Fatalf("ClientOutcome(%v, %v) = %v, %v; want %v", tc.sent, got, outcome, err, tc.want)
			}
			old, err := SetReplyEncryption(p, EncryptNotSup)
			if err != nil || old != tc.answer {
				t.Fatalf("SetReplyEncryption = %v, %v; want %v", old, err, tc.answer)
			}
			for i := range p {
				if want := orig[i]; i != babelfishEncryptionAt && p[i] != want {
					t.Fatalf("byte %d = %#x after SetReplyEncryption, want %#x", i, p[i], want)
				}
			}
			if enc, ok := driverReads(p); !ok || enc != EncryptNotSup {
				t.Fatalf("go-mssqldb would read the patched reply as %v, %v; want NOT_SUP", enc, ok)
			}
		})
	}
	var m Message
	err := m.Decode(babelfish(nil))
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrOptionLength) || fe.Token != TokenTraceID || fe.Offset != 25 {
		t.Fatalf("Decode of Babelfish's reply: %v, want ErrOptionLength for TRACEID at byte 25", err)
	}
}

// TestReplyTolerated: replies the client's check accepts although Decode refuses them (or
// accepts them too, where wantDecode is nil), each built from Babelfish's reply or SQL Server
// 2008's with one thing changed; ENCRYPTION stays ON, and SetReplyEncryption changes only its
// byte. driver says whether go-mssqldb accepts the reply itself: everything it accepts is
// accepted here (FuzzReplyEncryption checks it on any input); what it refuses on its own
// (FEDAUTHREQUIRED's length, an empty option at the payload's end) is left to it.
func TestReplyTolerated(t *testing.T) {
	appendData := func(entry, n int, data ...byte) func(p []byte) []byte {
		return func(p []byte) []byte {
			put16(p[entry+1:entry+3], len(p))
			put16(p[entry+3:entry+5], n)
			return append(p, data...)
		}
	}
	tests := map[string]struct {
		in         []byte
		encAt      int
		wantDecode error
		driver     bool
	}{
		"Babelfish: TRACEID and THREADID of 0 bytes": {
			in: babelfish(nil), encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"SQL Server 2008: THREADID of 0 bytes, at MARS's offset": {
			in: clone(server2008Vector), encAt: 32, driver: true},
		"TRACEID of 35 bytes": {
			in: babelfish(appendData(25, 35, make([]byte, 35)...)), encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"VERSION of 5 bytes": {
			in: babelfish(func(p []byte) []byte { p[4] = 5; return p }), encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"THREADID of 3 bytes": {
			in: babelfish(appendData(15, 3, 1, 2, 3)), encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"MARS of 2 bytes": {
			in: babelfish(appendData(20, 2, 0, 0)), encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"NONCEOPT of 31 bytes, no nonce asked for": {
			in:    babelfish(func(p []byte) []byte { p[25] = byte(TokenNonceOpt); return appendData(25, 31, make([]byte, 31)...)(p) }),
			encAt: 37, wantDecode: ErrOptionLength, driver: true},
		"FEDAUTHREQUIRED of 0 bytes (go-mssqldb refuses it itself)": {
			in: babelfish(func(p []byte) []byte { p[25] = byte(TokenFedAuthRequired); return p }), encAt: 37, wantDecode: ErrOptionLength},
		"VERSION second": {
			in: babelfish(func(p []byte) []byte {
				var e [EntrySize]byte
				copy(e[:], p[0:5])
				copy(p[0:5], p[5:10])
				copy(p[5:10], e[:])
				return p
			}), encAt: 37, wantDecode: ErrVersionNotFirst, driver: true},
		"THREADID twice": {
			in: babelfish(func(p []byte) []byte { p[25], p[27] = byte(TokenThreadID), 39; return p }), encAt: 37, wantDecode: ErrDuplicateOption, driver: true},
		"SQL Server 2008, INSTOPT data inside the option table": {
			in: func() []byte { p := clone(server2008Vector); p[12] = 0; return p }(), encAt: 32, wantDecode: ErrOptionBounds, driver: true},
		"SQL Server 2008, MARS data overlapping VERSION's": {
			in: func() []byte { p := clone(server2008Vector); p[22] = 31; return p }(), encAt: 32, wantDecode: ErrOptionOverlap, driver: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var m Message
			if err := m.Decode(tc.in); !errors.Is(err, tc.wantDecode) || (err == nil) != (tc.wantDecode == nil) {
				t.Fatalf("Decode: %v, want %v", err, tc.wantDecode)
			}
			if _, ok := driverReads(tc.in); ok != tc.driver {
				t.Fatalf("go-mssqldb accepts it: %v, want %v", ok, tc.driver)
			}
			p := clone(tc.in)
			if got, err := ReplyEncryptionOf(p); err != nil || got != EncryptOn {
				t.Fatalf("ReplyEncryptionOf = %v, %v; want ON", got, err)
			}
			if old, err := SetReplyEncryption(p, EncryptNotSup); err != nil || old != EncryptOn {
				t.Fatalf("SetReplyEncryption = %v, %v; want ON", old, err)
			}
			want := clone(tc.in)
			want[tc.encAt] = byte(EncryptNotSup)
			if !bytes.Equal(p, want) {
				t.Fatalf("after SetReplyEncryption:\n% x\nwant\n% x", p, want)
			}
		})
	}
}

// TestReplyRefused: the refusals the package documentation lists (section "Reading a server's
// reply"), each built from Babelfish's reply with one thing changed. driver says whether
// go-mssqldb would accept it: where it would, the refusal is one the documentation gives a
// reason for.
func TestReplyRefused(t *testing.T) {
	tests := map[string]struct {
		in         []byte
		wantErr    error
		wantToken  Token
		wantOffset int
		driver     bool
	}{
		"empty payload": {
			in: nil, wantErr: ErrNoTerminator, wantToken: TokenTerminator, wantOffset: 0},
		"no terminator": {
			in: babelfish(func(p []byte) []byte { return p[:30] }), wantErr: ErrNoTerminator, wantToken: TokenTerminator, wantOffset: 30},
		"truncated entry": {
			in: babelfish(func(p []byte) []byte { return p[:28] }), wantErr: ErrTruncatedTable, wantToken: TokenTraceID, wantOffset: 25},
		"MARS past the end": {
			in: babelfish(func(p []byte) []byte { p[22] = 40; return p }), wantErr: ErrOptionBounds, wantToken: TokenMARS, wantOffset: 20},
		"empty THREADID past the end": {
			in: babelfish(func(p []byte) []byte { p[17] = 41; return p }), wantErr: ErrOptionBounds, wantToken: TokenThreadID, wantOffset: 15},
		"TRACEID of 36 bytes past the end": {
			in: babelfish(func(p []byte) []byte { p[29] = 36; return p }), wantErr: ErrOptionBounds, wantToken: TokenTraceID, wantOffset: 25, driver: true},
		"no ENCRYPTION": {
			in: babelfish(func(p []byte) []byte { p[5] = 0x2A; return p }), wantErr: ErrNoEncryptionOption, wantToken: TokenEncryption, wantOffset: -1},
		"ENCRYPTION twice": {
			in: babelfish(func(p []byte) []byte { p[10] = byte(TokenEncryption); return p }), wantErr: ErrDuplicateOption, wantToken: TokenEncryption, wantOffset: 10, driver: true},
		"ENCRYPTION of 0 bytes": {
			in: babelfish(func(p []byte) []byte { p[9] = 0; return p }), wantErr: ErrOptionLength, wantToken: TokenEncryption, wantOffset: 5},
		"ENCRYPTION of 2 bytes": {
			in: babelfish(func(p []byte) []byte { p[9] = 2; return p }), wantErr: ErrOptionLength, wantToken: TokenEncryption, wantOffset: 5, driver: true},
		"ENCRYPTION on its own table entry": {
			// Byte 5 is ENCRYPTION's token (0x01, ON); patched to NOT_SUP it would make the entry INSTOPT.
			in: babelfish(func(p []byte) []byte { p[7] = 5; return p }), wantErr: ErrOptionBounds, wantToken: TokenEncryption, wantOffset: 5, driver: true},
		"ENCRYPTION byte inside INSTOPT's data": {
			in: babelfish(func(p []byte) []byte { p[12] = 37; return p }), wantErr: ErrOptionOverlap, wantToken: TokenInstOpt, wantOffset: 10, driver: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, ok := driverReads(tc.in); ok != tc.driver {
				t.Fatalf("go-mssqldb accepts it: %v, want %v", ok, tc.driver)
			}
			p := clone(tc.in)
			if _, err := ReplyEncryptionOf(p); !errors.Is(err, tc.wantErr) {
				t.Fatalf("ReplyEncryptionOf error = %v, want %v", err, tc.wantErr)
			}
			_, err := SetReplyEncryption(p, EncryptNotSup)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("SetReplyEncryption error = %v, want %v", err, tc.wantErr)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Token != tc.wantToken || fe.Offset != tc.wantOffset {
				t.Fatalf("error %v names %v at byte %d, want %v at byte %d", err, fe.Token, fe.Offset, tc.wantToken, tc.wantOffset)
			}
			if !bytes.Equal(p, tc.in) {
				t.Fatalf("SetReplyEncryption modified a reply it refused")
			}
		})
	}
}

// TestReplyErrorMessages: the refusals specific to replies say which option and where.
func TestReplyErrorMessages(t *testing.T) {
	tests := map[string]struct {
		in   []byte
		want string
	}{
		"ENCRYPTION twice": {babelfish(func(p []byte) []byte { p[10] = byte(TokenEncryption); return p }),
			"prelogin: duplicate option (ENCRYPTION at byte 10 repeats the entry at byte 5)"},
		"ENCRYPTION byte inside another option": {babelfish(func(p []byte) []byte { p[12] = 37; return p }),
			"prelogin: option data overlap (INSTOPT at byte 10: data [37, 38) overlaps that of ENCRYPTION at byte 5)"},
		"TRACEID past the end": {babelfish(func(p []byte) []byte { p[29] = 36; return p }),
			"prelogin: option data out of bounds (TRACEID at byte 25: data [40, 76) outside the data area of the 40-byte payload)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ReplyEncryptionOf(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}
