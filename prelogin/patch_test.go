package prelogin

import (
	"errors"
	"testing"
)

func TestSetEncryption(t *testing.T) {
	tests := map[string]struct {
		in      []byte
		at      int // offset of the ENCRYPTION byte
		old     Encryption
		set     Encryption
		wantErr error
	}{
		"client vector ON to NOT_SUP":   {in: clientVector, at: 32, old: EncryptOn, set: EncryptNotSup},
		"2008 reply ON to NOT_SUP":      {in: server2008Vector, at: 32, old: EncryptOn, set: EncryptNotSup},
		"every option, keep CERT bit":   {in: fullClientVector, at: 52, old: EncryptOff | EncryptClientCertBit, set: EncryptOn | EncryptClientCertBit},
		"same value":                    {in: clientVector, at: 32, old: EncryptOn, set: EncryptOn},
		"strict value":                  {in: clientVector, at: 32, old: EncryptOn, set: EncryptStrict},
		"non-canonical layout kept":     {in: cat(ent(TokenEncryption, 12, 1), ent(TokenMARS, 11, 1), term, []byte{0, 2, 0xEE}), at: 12, old: EncryptNotSup, set: EncryptOff},
		"no ENCRYPTION option":          {in: cat(ent(TokenMARS, 6, 1), term, []byte{0}), wantErr: ErrNoEncryptionOption},
		"terminator only":               {in: term, wantErr: ErrNoEncryptionOption},
		"ENCRYPTION of two bytes":       {in: cat(ent(TokenEncryption, 6, 2), term, []byte{1, 1}), wantErr: ErrOptionLength},
		"ENCRYPTION beyond the payload": {in: cat(ent(TokenEncryption, 6, 1), term), wantErr: ErrOptionBounds},
		"no terminator":                 {in: clientVector[:25], wantErr: ErrNoTerminator},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := clone(tc.in)
			got, err := EncryptionOf(p)
			if !errors.Is(err, tc.wantErr) || err == nil && got != tc.old {
				t.Fatalf("EncryptionOf = %v, %v; want %v, %v", got, err, tc.old, tc.wantErr)
			}
			old, err := SetEncryption(p, tc.set)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("SetEncryption error = %v, want %v", err, tc.wantErr)
			}
			for i := range p {
				want := tc.in[i]
				if err == nil && i == tc.at {
					want = byte(tc.set)
				}
				if p[i] != want {
					t.Fatalf("byte %d = %#x after SetEncryption, want %#x", i, p[i], want)
				}
			}
			if err != nil {
				return
			}
			if old != tc.old {
				t.Fatalf("SetEncryption returned old value %v, want %v", old, tc.old)
			}
			if now, err := EncryptionOf(p); err != nil || now != tc.set {
				t.Fatalf("EncryptionOf after SetEncryption = %v, %v; want %v", now, err, tc.set)
			}
			var before, after Message
			if err := before.Decode(tc.in); err != nil {
				t.Fatal(err)
			}
			if err := after.Decode(p); err != nil {
				t.Fatal(err)
			}
			before.Encryption = tc.set
			if !after.Equal(&before) {
				t.Fatalf("SetEncryption changed more than ENCRYPTION: %+v", after)
			}
		})
	}
}

func TestErrNoEncryptionMessage(t *testing.T) {
	_, err := EncryptionOf(term)
	const want = "prelogin: no ENCRYPTION option (payload of 1 bytes)"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}
