package prelogin

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEncodeAppends(t *testing.T) {
	prefix := []byte{0x12, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00} // room for a packet header
	out, err := clientVectorMessage().Encode(clone(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, cat(prefix, clientVector)) {
		t.Fatalf("Encode(prefix) = % x", out)
	}
}

func TestEncodeEmpty(t *testing.T) {
	out, err := (&Message{}).Encode(nil)
	if err != nil || !bytes.Equal(out, term) {
		t.Fatalf("Encode(empty) = % x, %v; want ff", out, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := map[string]struct {
		m         *Message
		wantErr   error
		wantToken Token
	}{
		"unknown option with a known token": {
			&Message{Unknown: []Option{{Token: TokenEncryption, Data: []byte{1}}}}, ErrInvalidOption, TokenEncryption},
		"unknown option with the terminator token": {
			&Message{Unknown: []Option{{Token: TokenTerminator}}}, ErrInvalidOption, TokenTerminator},
		"repeated unknown option": {
			&Message{Unknown: []Option{{Token: 0x10}, {Token: 0x11}, {Token: 0x10}}}, ErrDuplicateOption, 0x10},
		"INSTOPT too long": {
			&Message{Instance: make([]byte, 0xFFFF), HasInstance: true}, ErrTooLarge, 0},
		"unknown data too long": {
			&Message{HasEncryption: true, Unknown: []Option{{Token: 0x10, Data: make([]byte, 0xFFFF-11)}}}, ErrTooLarge, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dst := []byte{1, 2, 3}
			out, err := tc.m.Encode(dst)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Encode error = %v, want %v", err, tc.wantErr)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Token != tc.wantToken || fe.Offset != -1 {
				t.Fatalf("Encode error %#v: want a *FormatError for %v at offset -1", err, tc.wantToken)
			}
			if !bytes.Equal(out, []byte{1, 2, 3}) {
				t.Fatalf("Encode changed dst on error: % x", out)
			}
			if _, err := tc.m.Size(); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Size error = %v, want %v", err, tc.wantErr)
			}
			if tc.m.Equal(tc.m) {
				t.Fatalf("a Message Encode rejects is Equal to itself")
			}
		})
	}
}

func TestErrTooLargeMessage(t *testing.T) {
	_, err := (&Message{Instance: make([]byte, 0xFFFF), HasInstance: true}).Encode(nil)
	const want = "prelogin: payload too large (encoded size 65541 bytes, at most 65535)"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

// TestEncodeLargest encodes the largest payload that fits (65535 bytes) and decodes it back.
func TestEncodeLargest(t *testing.T) {
	m := &Message{HasEncryption: true, Unknown: []Option{{Token: 0x10, Data: make([]byte, 0xFFFF-12)}}}
	out, err := m.Encode(nil)
	if err != nil || len(out) != 0xFFFF {
		t.Fatalf("Encode = %d bytes, %v; want 65535", len(out), err)
	}
	var back Message
	if err := back.Decode(out); err != nil || !back.Equal(m) {
		t.Fatalf("Decode = %v", err)
	}
}

func TestEncodeOrder(t *testing.T) {
	tests := map[string]struct {
		m    func() *Message
		want []Token
	}{
		"hand-built: token order, unknown last": {
			func() *Message {
				return &Message{HasMARS: true, HasEncryption: true, HasVersion: true,
					Unknown: []Option{{Token: 0x30}, {Token: 0x20}}}
			},
			[]Token{TokenVersion, TokenEncryption, TokenMARS, 0x30, 0x20}},
		"SetOrder, VERSION still first": {
			func() *Message {
				m := &Message{HasMARS: true, HasEncryption: true, HasVersion: true, HasInstance: true,
					Unknown: []Option{{Token: 0x30}, {Token: 0x20}}}
				m.SetOrder([]Token{TokenMARS, 0x20, TokenVersion, TokenEncryption, TokenMARS, 0x77, TokenNonceOpt})
				return m
			},
			[]Token{TokenVersion, TokenMARS, 0x20, TokenEncryption, TokenInstOpt, 0x30}},
		"decoded order, one option removed, one added": {
			func() *Message {
				var m Message
				if err := m.Decode(cat(ent(TokenMARS, 11, 1), ent(TokenEncryption, 12, 1), term, []byte{0, 1})); err != nil {
					panic(err)
				}
				m.HasMARS = false
				m.HasThreadID = true
				m.HasVersion = true
				return &m
			},
			[]Token{TokenVersion, TokenEncryption, TokenThreadID}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := tc.m()
			got, err := m.Tokens(nil)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Tokens = %v, %v; want %v", got, err, tc.want)
			}
			out, err := m.Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			var back Message
			if err := back.Decode(out); err != nil {
				t.Fatal(err)
			}
			got, _ = back.Tokens(nil)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("table order on the wire = %v, want %v", got, tc.want)
			}
		})
	}
}

// randomMessage builds a Message with a random subset of options, random values and up to four
// unknown options in a random table order.
func randomMessage(r *rand.Rand) *Message {
	m := &Message{}
	if r.IntN(4) > 0 {
		m.HasVersion = true
		m.Version = Version{Major: uint8(r.Uint32()), Minor: uint8(r.Uint32()), Build: uint16(r.Uint32()), SubBuild: uint16(r.Uint32())}
	}
	if r.IntN(4) > 0 {
		m.HasEncryption, m.Encryption = true, Encryption(r.Uint32())
	}
	if r.IntN(2) > 0 {
		m.HasInstance = true
		m.Instance = make([]byte, r.IntN(20))
		for i := range m.Instance {
			m.Instance[i] = byte(r.Uint32())
		}
	}
	if r.IntN(2) > 0 {
		m.HasThreadID = true
		if r.IntN(2) > 0 {
			m.ThreadIDEmpty = true
		} else {
			m.ThreadID = r.Uint32()
		}
	}
	if r.IntN(2) > 0 {
		m.HasMARS, m.MARS = true, uint8(r.Uint32())
	}
	if r.IntN(2) > 0 {
		m.HasTraceID = true
		for i := range 16 {
			m.TraceID.Connection[i], m.TraceID.Activity[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		m.TraceID.Sequence = r.Uint32()
	}
	if r.IntN(2) > 0 {
		m.HasFedAuthRequired, m.FedAuthRequired = true, uint8(r.Uint32())
	}
	if r.IntN(2) > 0 {
		m.HasNonce = true
		for i := range m.Nonce {
			m.Nonce[i] = byte(r.Uint32())
		}
	}
	for _, tok := range r.Perm(0xFF - 0x08)[:r.IntN(5)] {
		data := make([]byte, r.IntN(8))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		m.Unknown = append(m.Unknown, Option{Token: Token(0x08 + tok), Data: data})
	}
	order := []Token{0, 1, 2, 3, 4, 5, 6, 7}
	for _, o := range m.Unknown {
		order = append(order, o.Token)
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	m.SetOrder(order)
	return m
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var back Message
	var buf, again []byte
	for i := range 2000 {
		m := randomMessage(r)
		var err error
		buf, err = m.Encode(buf[:0])
		if err != nil {
			t.Fatalf("#%d Encode: %v", i, err)
		}
		if n, _ := m.Size(); n != len(buf) {
			t.Fatalf("#%d Size = %d, Encode wrote %d", i, n, len(buf))
		}
		if err := back.Decode(buf); err != nil {
			t.Fatalf("#%d Decode(% x): %v", i, buf, err)
		}
		if !back.Equal(m) || !m.Equal(&back) {
			t.Fatalf("#%d round trip:\n got %+v\nwant %+v", i, back, *m)
		}
		again, err = back.Encode(again[:0])
		if err != nil || !bytes.Equal(again, buf) {
			t.Fatalf("#%d re-encode differs:\n% x\n% x", i, again, buf)
		}
	}
}

func TestEqual(t *testing.T) {
	base := fullClientVectorMessage
	tests := map[string]struct {
		change func(m *Message)
		equal  bool
	}{
		"same":                        {func(m *Message) {}, true},
		"option removed":              {func(m *Message) { m.HasMARS = false }, false},
		"version":                     {func(m *Message) { m.Version.SubBuild++ }, false},
		"encryption":                  {func(m *Message) { m.Encryption = EncryptOn }, false},
		"instance":                    {func(m *Message) { m.Instance = []byte("SQL") }, false},
		"thread id":                   {func(m *Message) { m.ThreadID++ }, false},
		"thread id empty":             {func(m *Message) { m.ThreadIDEmpty = true }, false},
		"mars":                        {func(m *Message) { m.MARS = 1 }, false},
		"trace id":                    {func(m *Message) { m.TraceID.Sequence++ }, false},
		"fedauth":                     {func(m *Message) { m.FedAuthRequired = 0 }, false},
		"nonce":                       {func(m *Message) { m.Nonce[31]++ }, false},
		"unknown data":                {func(m *Message) { m.Unknown[0].Data = []byte{0xCA} }, false},
		"unknown token":               {func(m *Message) { m.Unknown[0].Token = 0x2B }, false},
		"order":                       {func(m *Message) { m.SetOrder([]Token{TokenMARS}) }, false},
		"order naming the same order": {func(m *Message) { m.SetOrder([]Token{0, 1, 2, 3}) }, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := base()
			tc.change(m)
			if got := m.Equal(base()); got != tc.equal {
				t.Fatalf("Equal = %v, want %v", got, tc.equal)
			}
			a, _ := m.Encode(nil)
			b, _ := base().Encode(nil)
			if bytes.Equal(a, b) != tc.equal {
				t.Fatalf("Equal disagrees with the encodings")
			}
		})
	}
	// Values of absent options are not compared.
	a := &Message{MARS: 1}
	if !a.Equal(&Message{MARS: 2}) {
		t.Fatalf("values of absent options compared")
	}
}

func TestInstanceName(t *testing.T) {
	for in, want := range map[string]string{"SQLEXPRESS\x00": "SQLEXPRESS", "\x00": "", "": "", "ab": "ab", "a\x00b\x00": "a"} {
		m := Message{Instance: []byte(in), HasInstance: true}
		if got := m.InstanceName(); got != want {
			t.Errorf("InstanceName(%q) = %q, want %q", in, got, want)
		}
	}
}
