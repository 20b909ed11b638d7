package prelogin

import "testing"

func TestStrings(t *testing.T) {
	tests := map[string]struct {
		got, want string
	}{
		"OFF":               {EncryptOff.String(), "OFF"},
		"ON":                {EncryptOn.String(), "ON"},
		"NOT_SUP":           {EncryptNotSup.String(), "NOT_SUP"},
		"REQ":               {EncryptReq.String(), "REQ"},
		"STRICT":            {EncryptStrict.String(), "STRICT(0x04)"},
		"OFF|CERT":          {(EncryptOff | EncryptClientCertBit).String(), "OFF|CLIENT_CERT"},
		"ON|CERT":           {(EncryptOn | EncryptClientCertBit).String(), "ON|CLIENT_CERT"},
		"REQ|CERT":          {Encryption(0x83).String(), "REQ|CLIENT_CERT"},
		"unknown":           {Encryption(0x20).String(), "Encryption(0x20)"},
		"unknown|CERT":      {Encryption(0x85).String(), "Encryption(0x05)|CLIENT_CERT"},
		"VERSION":           {TokenVersion.String(), "VERSION"},
		"ENCRYPTION":        {TokenEncryption.String(), "ENCRYPTION"},
		"INSTOPT":           {TokenInstOpt.String(), "INSTOPT"},
		"THREADID":          {TokenThreadID.String(), "THREADID"},
		"MARS":              {TokenMARS.String(), "MARS"},
		"TRACEID":           {TokenTraceID.String(), "TRACEID"},
		"FEDAUTHREQUIRED":   {TokenFedAuthRequired.String(), "FEDAUTHREQUIRED"},
		"NONCEOPT":          {TokenNonceOpt.String(), "NONCEOPT"},
		"TERMINATOR":        {TokenTerminator.String(), "TERMINATOR"},
		"unknown token":     {Token(0x2A).String(), "Token(0x2a)"},
		"none":              {ModeNone.String(), "none"},
		"login-only":        {ModeLoginOnly.String(), "login-only"},
		"full":              {ModeFull.String(), "full"},
		"strict":            {ModeStrict.String(), "strict"},
		"invalid mode":      {Mode(7).String(), "Mode(7)"},
		"version":           {Version{Major: 10, Build: 4000}.String(), "10.0.4000.0"},
		"version sub-build": {Version{Major: 16, Minor: 1, Build: 2, SubBuild: 3}.String(), "16.1.2.3"},
	}
	for name, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: String() = %q, want %q", name, tc.got, tc.want)
		}
	}
}

func TestEncryptionPredicates(t *testing.T) {
	for v := range 256 {
		e := Encryption(v)
		if e.Base()|e&EncryptClientCertBit != e || e.Base()&EncryptClientCertBit != 0 {
			t.Fatalf("%#x: Base/ClientCert do not split the value", v)
		}
		if e.ClientCert() != (v >= 0x80) {
			t.Fatalf("%#x: ClientCert = %v", v, e.ClientCert())
		}
		if e.Known() != (v&0x7F <= 4) {
			t.Fatalf("%#x: Known = %v", v, e.Known())
		}
	}
}

func TestMessageString(t *testing.T) {
	tests := map[string]struct {
		m    *Message
		want string
	}{
		"2008 reply": {server2008VectorMessage(),
			"VERSION=10.0.4000.0 ENCRYPTION=ON INSTOPT=00 THREADID=<empty> MARS=00"},
		"client": {clientVectorMessage(),
			"VERSION=9.0.0.0 ENCRYPTION=ON INSTOPT=00 THREADID=3512 MARS=01"},
		"every option": {fullClientVectorMessage(),
			"VERSION=17.2.5.7 ENCRYPTION=OFF|CLIENT_CERT INSTOPT=53514c00 THREADID=16909060 MARS=00 " +
				"TRACEID=101112131415161718191a1b1c1d1e1f... FEDAUTHREQUIRED=01 " +
				"NONCEOPT=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf... Token(0x2a)=cafe"},
		"empty":          {&Message{}, ""},
		"empty instance": {&Message{HasInstance: true}, "INSTOPT=<empty>"},
		"invalid": {&Message{Unknown: []Option{{Token: 1}}},
			"invalid Message: prelogin: invalid option (Message.Unknown holds ENCRYPTION, which is not an unknown option)"},
		"duplicate unknown": {&Message{Unknown: []Option{{Token: 9}, {Token: 9}}},
			"invalid Message: prelogin: duplicate option (Token(0x09) appears twice in Message.Unknown)"},
	}
	for name, tc := range tests {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%s: String() =\n%q\nwant\n%q", name, got, tc.want)
		}
	}
}
