package prelogin

import (
	"bytes"
	"slices"
	"testing"
)

// clientVector is the payload of the client PRELOGIN in MS-TDS 4.1 (docs/protocol.md, section "PRELOGIN"), the
// 8-byte packet header 12 01 00 2F 00 00 01 00 removed.
var clientVector = []byte{
	0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION: data at 26, 6 bytes
	0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION: data at 32, 1 byte
	0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT: data at 33, 1 byte
	0x03, 0x00, 0x22, 0x00, 0x04, // THREADID: data at 34, 4 bytes
	0x04, 0x00, 0x26, 0x00, 0x01, // MARS: data at 38, 1 byte
	0xFF,                               // TERMINATOR (offset 25)
	0x09, 0x00, 0x00, 0x00, 0x00, 0x00, // VERSION: 9.0, build 0, sub-build 0
	0x01,                   // ENCRYPTION: ON
	0x00,                   // INSTOPT: "" + NUL (default instance)
	0xB8, 0x0D, 0x00, 0x00, // THREADID: 3512 (little-endian)
	0x01, // MARS: on
}

// clientVectorMessage is clientVector decoded.
func clientVectorMessage() *Message {
	return &Message{
		Version: Version{Major: 9}, HasVersion: true,
		Encryption: EncryptOn, HasEncryption: true,
		Instance: []byte{0}, HasInstance: true,
		ThreadID: 3512, HasThreadID: true,
		MARS: 1, HasMARS: true,
	}
}

// server2008Vector is a SQL Server 2008 reply payload captured in a public bug report
// (docs/protocol.md, section "PRELOGIN"). THREADID has length 0 and shares its offset with MARS.
var server2008Vector = []byte{
	0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION: data at 26, 6 bytes
	0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION: data at 32, 1 byte
	0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT: data at 33, 1 byte
	0x03, 0x00, 0x22, 0x00, 0x00, // THREADID: data at 34, 0 bytes (servers send none)
	0x04, 0x00, 0x22, 0x00, 0x01, // MARS: data at 34, 1 byte
	0xFF,                               // TERMINATOR (offset 25)
	0x0A, 0x00, 0x0F, 0xA0, 0x00, 0x00, // VERSION: 10.0, build 4000, sub-build 0 (2008 SP2)
	0x01, // ENCRYPTION: ON
	0x00, // INSTOPT: 0 = instance name matched
	0x00, // MARS: off
}

// server2008VectorMessage is server2008Vector decoded.
func server2008VectorMessage() *Message {
	return &Message{
		Version: Version{Major: 10, Build: 4000}, HasVersion: true,
		Encryption: EncryptOn, HasEncryption: true,
		Instance: []byte{0}, HasInstance: true,
		HasThreadID: true, ThreadIDEmpty: true,
		MARS: 0, HasMARS: true,
	}
}

// fullClientVector has every known option and one unknown one (token 0x2A), canonical layout.
var fullClientVector = []byte{
	0x00, 0x00, 0x2E, 0x00, 0x06, // VERSION: data at 46, 6 bytes
	0x01, 0x00, 0x34, 0x00, 0x01, // ENCRYPTION: data at 52, 1 byte
	0x02, 0x00, 0x35, 0x00, 0x04, // INSTOPT: data at 53, 4 bytes
	0x03, 0x00, 0x39, 0x00, 0x04, // THREADID: data at 57, 4 bytes
	0x04, 0x00, 0x3D, 0x00, 0x01, // MARS: data at 61, 1 byte
	0x05, 0x00, 0x3E, 0x00, 0x24, // TRACEID: data at 62, 36 bytes
	0x06, 0x00, 0x62, 0x00, 0x01, // FEDAUTHREQUIRED: data at 98, 1 byte
	0x07, 0x00, 0x63, 0x00, 0x20, // NONCEOPT: data at 99, 32 bytes
	0x2A, 0x00, 0x83, 0x00, 0x02, // Token(0x2a): data at 131, 2 bytes
	0xFF,                               // TERMINATOR (offset 45)
	0x11, 0x02, 0x00, 0x05, 0x00, 0x07, // VERSION: 17.2, build 5, sub-build 7
	0x80,                // ENCRYPTION: OFF|CLIENT_CERT
	'S', 'Q', 'L', 0x00, // INSTOPT: "SQL" + NUL
	0x04, 0x03, 0x02, 0x01, // THREADID: 0x01020304 (little-endian)
	0x00,                                                                                           // MARS: off
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, // TRACEID connection GUID
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, // TRACEID activity GUID
	0x05, 0x00, 0x00, 0x00, // TRACEID activity sequence: 5 (little-endian)
	0x01,                                                                                           // FEDAUTHREQUIRED: client supports federated authentication
	0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF, // NONCEOPT
	0xB0, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xBB, 0xBC, 0xBD, 0xBE, 0xBF, // NONCEOPT (cont.)
	0xCA, 0xFE, // Token(0x2a) data
}

func fullClientVectorMessage() *Message {
	m := &Message{
		Version: Version{Major: 17, Minor: 2, Build: 5, SubBuild: 7}, HasVersion: true,
		Encryption: EncryptOff | EncryptClientCertBit, HasEncryption: true,
		Instance: []byte("SQL\x00"), HasInstance: true,
		ThreadID: 0x01020304, HasThreadID: true,
		MARS: 0, HasMARS: true,
		HasTraceID:      true,
		FedAuthRequired: 1, HasFedAuthRequired: true,
		HasNonce: true,
		Unknown:  []Option{{Token: 0x2A, Data: []byte{0xCA, 0xFE}}},
	}
	for i := range 16 {
		m.TraceID.Connection[i] = byte(0x10 + i)
		m.TraceID.Activity[i] = byte(0x20 + i)
	}
	m.TraceID.Sequence = 5
	for i := range 32 {
		m.Nonce[i] = byte(0xA0 + i)
	}
	return m
}

func TestVectors(t *testing.T) {
	tests := map[string]struct {
		payload []byte
		want    *Message
		tokens  []Token
	}{
		"client MS-TDS 4.1": {clientVector, clientVectorMessage(),
			[]Token{TokenVersion, TokenEncryption, TokenInstOpt, TokenThreadID, TokenMARS}},
		"SQL Server 2008 reply": {server2008Vector, server2008VectorMessage(),
			[]Token{TokenVersion, TokenEncryption, TokenInstOpt, TokenThreadID, TokenMARS}},
		"every option": {fullClientVector, fullClientVectorMessage(),
			[]Token{0, 1, 2, 3, 4, 5, 6, 7, 0x2A}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var m Message
			if err := m.Decode(tc.payload); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !m.Equal(tc.want) || !tc.want.Equal(&m) {
				t.Fatalf("Decode = %+v\nwant     %+v", m, *tc.want)
			}
			toks, err := m.Tokens(nil)
			if err != nil || !slices.Equal(toks, tc.tokens) {
				t.Fatalf("Tokens = %v, %v; want %v", toks, err, tc.tokens)
			}
			// Decode then encode reproduces the input byte for byte.
			out, err := m.Encode(nil)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(out, tc.payload) {
				t.Fatalf("Encode(Decode(x)) =\n% x\nwant\n% x", out, tc.payload)
			}
			// The hand-built message encodes to the fixture too.
			out, err = tc.want.Encode(nil)
			if err != nil || !bytes.Equal(out, tc.payload) {
				t.Fatalf("Encode(want) = % x, %v\nwant % x", out, err, tc.payload)
			}
			if n, err := m.Size(); err != nil || n != len(tc.payload) {
				t.Fatalf("Size = %d, %v; want %d", n, err, len(tc.payload))
			}
		})
	}
}

// TestVectorPacket checks the client vector against the whole packet quoted in docs/protocol.md.
func TestVectorPacket(t *testing.T) {
	packet := []byte{
		0x12, 0x01, 0x00, 0x2F, 0x00, 0x00, 0x01, 0x00, // header: PRELOGIN, EOM, length 47, SPID 0, packet 1, window 0
		0x00, 0x00, 0x1A, 0x00, 0x06, 0x01, 0x00, 0x20, 0x00, 0x01, 0x02, 0x00, 0x21, 0x00, 0x01,
		0x03, 0x00, 0x22, 0x00, 0x04, 0x04, 0x00, 0x26, 0x00, 0x01, 0xFF, 0x09, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x01, 0x00, 0xB8, 0x0D, 0x00, 0x00, 0x01,
	}
	if !bytes.Equal(packet[8:], clientVector) {
		t.Fatalf("fixture differs from the packet in docs/protocol.md")
	}
	if got, err := EncryptionOf(packet[8:]); err != nil || got != EncryptOn {
		t.Fatalf("EncryptionOf = %v, %v; want ON", got, err)
	}
}
