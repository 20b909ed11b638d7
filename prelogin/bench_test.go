package prelogin

import "testing"

// largeMessage returns a decoded-shape Message of about size bytes: every known option plus
// unknown options carrying the rest.
func largeMessage(size int) *Message {
	m := fullClientVectorMessage()
	m.Unknown = nil
	chunk := make([]byte, 1000)
	for tok := Token(0x10); size > len(fullClientVector)+len(chunk); tok++ {
		m.Unknown = append(m.Unknown, Option{Token: tok, Data: chunk})
		size -= len(chunk) + EntrySize
	}
	return m
}

var benchPayloads = []struct {
	name    string
	payload func() []byte
}{
	{"client", func() []byte { return clientVector }},
	{"sql2008", func() []byte { return server2008Vector }},
	{"all-options", func() []byte { return fullClientVector }},
	{"4KiB", func() []byte { b, _ := largeMessage(4096).Encode(nil); return b }},
	{"16KiB", func() []byte { b, _ := largeMessage(16384).Encode(nil); return b }},
}

// BenchmarkDecode decodes into one reused Message: 0 allocs/op in the steady state.
func BenchmarkDecode(b *testing.B) {
	for _, bp := range benchPayloads {
		p := bp.payload()
		b.Run(bp.name, func(b *testing.B) {
			var m Message
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if err := m.Decode(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes into one reused buffer: 0 allocs/op in the steady state.
func BenchmarkEncode(b *testing.B) {
	for _, bp := range benchPayloads {
		var m Message
		if err := m.Decode(bp.payload()); err != nil {
			b.Fatal(err)
		}
		b.Run(bp.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			b.SetBytes(int64(len(bp.payload())))
			for b.Loop() {
				var err error
				if buf, err = m.Encode(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetEncryption patches the ENCRYPTION byte in place (it validates the whole table).
func BenchmarkSetEncryption(b *testing.B) {
	for _, bp := range benchPayloads {
		p := clone(bp.payload())
		b.Run(bp.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, err := SetEncryption(p, EncryptNotSup); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkClientOutcome(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ClientOutcome(EncryptOff, EncryptReq); err != nil {
			b.Fatal(err)
		}
	}
}
