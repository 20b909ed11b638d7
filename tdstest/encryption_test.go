package tdstest

import (
	"testing"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

func TestEncryption(t *testing.T) {
	for _, tc := range []struct {
		e        Encryption
		name     string
		preLogin prelogin.Encryption
	}{
		{EncryptOn, "ON", prelogin.EncryptOn},
		{EncryptOff, "OFF", prelogin.EncryptOff},
		{EncryptNotSup, "NOT_SUP", prelogin.EncryptNotSup},
		{EncryptStrict, "STRICT", prelogin.EncryptOn},
		{EncryptStrict + 1, "Encryption(4)", notASetting},
	} {
		if got := tc.e.String(); got != tc.name {
			t.Errorf("String() = %q, want %q", got, tc.name)
		}
		if got := tc.e.preloginSetting(); got != tc.preLogin {
			t.Errorf("%v: PRELOGIN setting %v, want %v", tc.e, got, tc.preLogin)
		}
	}
	var zero Config
	if zero.Encryption != EncryptOn {
		t.Fatalf("zero Config.Encryption is %v, want ON", zero.Encryption)
	}
}

// TestNotASetting: the setting of an unknown Encryption refuses every client.
func TestNotASetting(t *testing.T) {
	for c := range 256 {
		if reply, mode, closeAfter := prelogin.ServerReply(notASetting, prelogin.Encryption(c)); !closeAfter {
			t.Fatalf("client %v: reply %v, mode %v, and the server goes on", prelogin.Encryption(c), reply, mode)
		}
	}
}
