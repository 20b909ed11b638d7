package prelogin

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	tests := map[string]struct {
		in         []byte
		wantErr    error
		wantToken  Token
		wantOffset int
	}{
		"empty payload": {
			in: nil, wantErr: ErrNoTerminator, wantToken: TokenTerminator, wantOffset: 0},
		"table runs out after one entry": {
			in: ent(TokenEncryption, 5, 1), wantErr: ErrNoTerminator, wantToken: TokenTerminator, wantOffset: 5},
		"first entry truncated": {
			in: []byte{0x01, 0x00, 0x06}, wantErr: ErrTruncatedTable, wantToken: TokenEncryption, wantOffset: 0},
		"second entry truncated": {
			in: cat(ent(TokenEncryption, 10, 1), []byte{0x04, 0x00, 0x0A, 0x00}), wantErr: ErrTruncatedTable, wantToken: TokenMARS, wantOffset: 5},
		"data beyond the end": {
			in: cat(ent(TokenEncryption, 6, 1), term), wantErr: ErrOptionBounds, wantToken: TokenEncryption, wantOffset: 0},
		"data runs past the end": {
			in:      cat(ent(TokenEncryption, 11, 1), ent(TokenInstOpt, 12, 5), term, []byte{0, 'a', 'b'}),
			wantErr: ErrOptionBounds, wantToken: TokenInstOpt, wantOffset: 5},
		"data inside the table": {
			in: cat(ent(TokenEncryption, 0, 1), term, []byte{1}), wantErr: ErrOptionBounds, wantToken: TokenEncryption, wantOffset: 0},
		"data on the terminator": {
			in: cat(ent(TokenEncryption, 5, 1), term, []byte{1}), wantErr: ErrOptionBounds, wantToken: TokenEncryption, wantOffset: 0},
		"empty option past the end": {
			in: cat(ent(TokenThreadID, 7, 0), term), wantErr: ErrOptionBounds, wantToken: TokenThreadID, wantOffset: 0},
		"offset and length 0xFFFF": {
			in: cat(ent(0x10, 0xFFFF, 0xFFFF), term), wantErr: ErrOptionBounds, wantToken: 0x10, wantOffset: 0},
		"same byte for two options": {
			in:      cat(ent(TokenEncryption, 11, 1), ent(TokenMARS, 11, 1), term, []byte{1}),
			wantErr: ErrOptionOverlap, wantToken: TokenMARS, wantOffset: 5},
		"partial overlap": {
			in:      cat(ent(TokenInstOpt, 11, 3), ent(0x10, 12, 3), term, []byte{'a', 'b', 0, 9}),
			wantErr: ErrOptionOverlap, wantToken: 0x10, wantOffset: 5},
		"duplicate ENCRYPTION": {
			in:      cat(ent(TokenEncryption, 11, 1), ent(TokenEncryption, 12, 1), term, []byte{1, 2}),
			wantErr: ErrDuplicateOption, wantToken: TokenEncryption, wantOffset: 5},
		"duplicate unknown option": {
			in:      cat(ent(0x10, 16, 0), ent(TokenMARS, 16, 1), ent(0x10, 16, 0), term, []byte{0}),
			wantErr: ErrDuplicateOption, wantToken: 0x10, wantOffset: 10},
		"VERSION second": {
			in:      cat(ent(TokenEncryption, 11, 1), ent(TokenVersion, 12, 6), term, []byte{1, 9, 0, 0, 0, 0, 0}),
			wantErr: ErrVersionNotFirst, wantToken: TokenVersion, wantOffset: 5},
		// The wrong lengths below are Decode's strict reading (a client's PRELOGIN, as a server
		// reads it). In a server's reply only ENCRYPTION's length is checked: ReplyEncryptionOf
		// accepts a reply with each of the other lengths (TestReplyTolerated).
		"VERSION of 5 bytes": {
			in: cat(ent(TokenVersion, 6, 5), term, []byte{9, 0, 0, 0, 0}), wantErr: ErrOptionLength, wantToken: TokenVersion, wantOffset: 0},
		"ENCRYPTION of 0 bytes": {
			in: cat(ent(TokenEncryption, 6, 0), term), wantErr: ErrOptionLength, wantToken: TokenEncryption, wantOffset: 0},
		"ENCRYPTION of 2 bytes": {
			in: cat(ent(TokenEncryption, 6, 2), term, []byte{1, 1}), wantErr: ErrOptionLength, wantToken: TokenEncryption, wantOffset: 0},
		"THREADID of 3 bytes": {
			in: cat(ent(TokenThreadID, 6, 3), term, []byte{1, 2, 3}), wantErr: ErrOptionLength, wantToken: TokenThreadID, wantOffset: 0},
		"MARS of 2 bytes": {
			in: cat(ent(TokenMARS, 6, 2), term, []byte{0, 0}), wantErr: ErrOptionLength, wantToken: TokenMARS, wantOffset: 0},
		"TRACEID of 35 bytes": {
			in: cat(ent(TokenTraceID, 6, 35), term, make([]byte, 35)), wantErr: ErrOptionLength, wantToken: TokenTraceID, wantOffset: 0},
		"FEDAUTHREQUIRED of 0 bytes": {
			in: cat(ent(TokenFedAuthRequired, 6, 0), term), wantErr: ErrOptionLength, wantToken: TokenFedAuthRequired, wantOffset: 0},
		"NONCEOPT of 31 bytes": {
			in: cat(ent(TokenNonceOpt, 6, 31), term, make([]byte, 31)), wantErr: ErrOptionLength, wantToken: TokenNonceOpt, wantOffset: 0},
		"client vector cut short": {
			in: clientVector[:len(clientVector)-1], wantErr: ErrOptionBounds, wantToken: TokenMARS, wantOffset: 20},
		"client vector without terminator": {
			in: clientVector[:25], wantErr: ErrNoTerminator, wantToken: TokenTerminator, wantOffset: 25},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := fullClientVectorMessage() // Decode must empty it even on error
			err := m.Decode(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Decode error = %v, want %v", err, tc.wantErr)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode error %T is not a *FormatError", err)
			}
			if fe.Token != tc.wantToken || fe.Offset != tc.wantOffset {
				t.Fatalf("FormatError names %v at byte %d, want %v at byte %d (%v)", fe.Token, fe.Offset, tc.wantToken, tc.wantOffset, err)
			}
			if !m.Equal(&Message{}) {
				t.Fatalf("Message after failed Decode = %+v, want empty", *m)
			}
			// EncryptionOf and SetEncryption check the payload the same way.
			in := clone(tc.in)
			if _, err := EncryptionOf(in); !errors.Is(err, tc.wantErr) {
				t.Fatalf("EncryptionOf error = %v, want %v", err, tc.wantErr)
			}
			if _, err := SetEncryption(in, EncryptNotSup); !errors.Is(err, tc.wantErr) {
				t.Fatalf("SetEncryption error = %v, want %v", err, tc.wantErr)
			}
			if !bytes.Equal(in, tc.in) {
				t.Fatalf("SetEncryption modified a payload it rejected")
			}
		})
	}
}

func TestFormatErrorMessages(t *testing.T) {
	tests := map[string]struct {
		in   []byte
		want string
	}{
		"no terminator": {nil,
			"prelogin: option table has no terminator (payload of 0 bytes ends where the next table entry should start at byte 0)"},
		"bounds": {cat(ent(TokenEncryption, 6, 1), term),
			"prelogin: option data out of bounds (ENCRYPTION at byte 0: data [6, 7) outside the data area of the 6-byte payload)"},
		"overlap": {cat(ent(TokenEncryption, 11, 1), ent(TokenMARS, 11, 1), term, []byte{1}),
			"prelogin: option data overlap (MARS at byte 5: data [11, 12) overlaps that of ENCRYPTION at byte 0)"},
		"length": {cat(ent(TokenThreadID, 6, 3), term, []byte{1, 2, 3}),
			"prelogin: option has the wrong length (THREADID at byte 0: length 3, want 4 or 0)"},
		"VERSION length": {cat(ent(TokenVersion, 6, 5), term, make([]byte, 5)),
			"prelogin: option has the wrong length (VERSION at byte 0: length 5, want 6)"},
		"MARS length": {cat(ent(TokenMARS, 6, 2), term, make([]byte, 2)),
			"prelogin: option has the wrong length (MARS at byte 0: length 2, want 1)"},
		"TRACEID length": {cat(ent(TokenTraceID, 6, 1), term, make([]byte, 1)),
			"prelogin: option has the wrong length (TRACEID at byte 0: length 1, want 36)"},
		"NONCEOPT length": {cat(ent(TokenNonceOpt, 6, 0), term),
			"prelogin: option has the wrong length (NONCEOPT at byte 0: length 0, want 32)"},
		"duplicate": {cat(ent(0x10, 11, 0), ent(0x10, 11, 0), term),
			"prelogin: duplicate option (Token(0x10) at byte 5 repeats the entry at byte 0)"},
		"version": {cat(ent(TokenEncryption, 11, 1), ent(TokenVersion, 12, 6), term, []byte{1, 9, 0, 0, 0, 0, 0}),
			"prelogin: VERSION is not the first option (VERSION at byte 5)"},
		"truncated": {[]byte{0x01, 0x00},
			"prelogin: option table entry truncated (entry for ENCRYPTION at byte 0 needs 5 bytes, payload has 2)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var m Message
			err := m.Decode(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}

// TestDecodeTolerated covers input that is not what Encode writes but that Decode accepts.
func TestDecodeTolerated(t *testing.T) {
	tests := map[string]struct {
		in        []byte
		want      *Message
		canonical bool // Encode(Decode(in)) == in
	}{
		"terminator only": {term, &Message{}, true},
		"no VERSION, no ENCRYPTION": {cat(ent(TokenMARS, 6, 1), term, []byte{1}),
			&Message{MARS: 1, HasMARS: true}, true},
		"empty INSTOPT": {cat(ent(TokenInstOpt, 6, 0), term),
			&Message{Instance: []byte{}, HasInstance: true}, true},
		"empty THREADID at the end": {cat(ent(TokenEncryption, 11, 1), ent(TokenThreadID, 12, 0), term, []byte{2}),
			&Message{Encryption: EncryptNotSup, HasEncryption: true, HasThreadID: true, ThreadIDEmpty: true}, true},
		"empty option sharing an offset with a later one": {
			cat(ent(TokenThreadID, 11, 0), ent(TokenMARS, 11, 1), term, []byte{1}),
			&Message{HasThreadID: true, ThreadIDEmpty: true, MARS: 1, HasMARS: true}, true},
		"MARS and FEDAUTHREQUIRED values other than 0 and 1": {
			cat(ent(TokenMARS, 11, 1), ent(TokenFedAuthRequired, 12, 1), term, []byte{7, 9}),
			&Message{MARS: 7, HasMARS: true, FedAuthRequired: 9, HasFedAuthRequired: true}, true},
		"unknown ENCRYPTION value": {cat(ent(TokenEncryption, 6, 1), term, []byte{0x20}),
			&Message{Encryption: 0x20, HasEncryption: true}, true},
		"empty option pointing at offset 0": {cat(ent(TokenEncryption, 11, 1), ent(TokenThreadID, 0, 0), term, []byte{1}),
			&Message{Encryption: EncryptOn, HasEncryption: true, HasThreadID: true, ThreadIDEmpty: true}, false},
		"empty option pointing at the end": {cat(ent(TokenThreadID, 6, 0), term),
			&Message{HasThreadID: true, ThreadIDEmpty: true}, true},
		"data in reverse order": {
			cat(ent(TokenEncryption, 12, 1), ent(TokenMARS, 11, 1), term, []byte{0, 1}),
			&Message{Encryption: EncryptOn, HasEncryption: true, MARS: 0, HasMARS: true}, false},
		"gap before the data": {
			cat(ent(TokenEncryption, 8, 1), term, []byte{0xEE, 0xEE, 3}),
			&Message{Encryption: EncryptReq, HasEncryption: true}, false},
		"trailing bytes": {
			cat(ent(TokenEncryption, 6, 1), term, []byte{3, 0xEE}),
			&Message{Encryption: EncryptReq, HasEncryption: true}, false},
		"table order kept": {
			cat(ent(TokenMARS, 16, 1), ent(0x42, 17, 2), ent(TokenEncryption, 19, 1), term, []byte{1, 'h', 'i', 1}),
			func() *Message {
				m := &Message{MARS: 1, HasMARS: true, Encryption: EncryptOn, HasEncryption: true,
					Unknown: []Option{{Token: 0x42, Data: []byte("hi")}}}
				m.SetOrder([]Token{TokenMARS, 0x42, TokenEncryption})
				return m
			}(), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var m Message
			if err := m.Decode(tc.in); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !m.Equal(tc.want) {
				t.Fatalf("Decode = %+v\nwant     %+v", m, *tc.want)
			}
			out, err := m.Encode(nil)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got := bytes.Equal(out, tc.in); got != tc.canonical {
				t.Fatalf("Encode(Decode(in)) == in is %v, want %v (% x)", got, tc.canonical, out)
			}
			var again Message
			if err := again.Decode(out); err != nil || !again.Equal(&m) {
				t.Fatalf("Decode(Encode(m)) = %+v, %v; want %+v", again, err, m)
			}
		})
	}
}

func TestDecodeDoesNotKeepSource(t *testing.T) {
	src := clone(fullClientVector)
	var m Message
	if err := m.Decode(src); err != nil {
		t.Fatal(err)
	}
	for i := range src {
		src[i] = 0xEE
	}
	if !m.Equal(fullClientVectorMessage()) {
		t.Fatalf("Message changed with its source: %+v", m)
	}
}

func TestDecodeReuse(t *testing.T) {
	var m Message
	for range 3 {
		for _, tc := range []struct {
			in   []byte
			want *Message
		}{
			{fullClientVector, fullClientVectorMessage()},
			{server2008Vector, server2008VectorMessage()},
			{clientVector, clientVectorMessage()},
		} {
			if err := m.Decode(tc.in); err != nil {
				t.Fatal(err)
			}
			if !m.Equal(tc.want) {
				t.Fatalf("reused Decode = %+v\nwant %+v", m, *tc.want)
			}
			if m.Has(0x2A) != tc.want.Has(0x2A) || m.HasTraceID != tc.want.HasTraceID {
				t.Fatalf("options left over from an earlier Decode: %+v", m)
			}
		}
	}
}

// TestDecodeManyUnknown decodes a table with every unknown token 0x08..0xFE once.
func TestDecodeManyUnknown(t *testing.T) {
	var want Message
	for tok := Token(0x08); tok < TokenTerminator; tok++ {
		want.Unknown = append(want.Unknown, Option{Token: tok, Data: []byte{byte(tok), byte(tok)}})
	}
	want.Version, want.HasVersion = Version{Major: 16}, true
	in, err := want.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := m.Decode(in); err != nil {
		t.Fatal(err)
	}
	if !m.Equal(&want) || len(m.Unknown) != 247 {
		t.Fatalf("Decode lost options: %d unknown", len(m.Unknown))
	}
}
