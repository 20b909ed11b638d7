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
		"none":              {OutcomeNone.String(), "none"},
		"login-only":        {OutcomeLoginOnly.String(), "login-only"},
		"full":              {OutcomeFull.String(), "full"},
		"unknown outcome":   {Outcome(7).String(), "Outcome(7)"},
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
	for v := range 256 {
		if tok := Token(v); tok.Known() != (v <= 7) {
			t.Fatalf("Token(%#x).Known() = %v", v, tok.Known())
		}
	}
}
