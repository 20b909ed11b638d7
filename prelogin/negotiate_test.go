package prelogin

import (
	"errors"
	"strings"
	"testing"
)

const cert = EncryptClientCertBit

// TestClientOutcome is the client's view: every client value this package knows of against
// every reply, plus invalid values on both sides.
func TestClientOutcome(t *testing.T) {
	type row struct {
		sent, reply Encryption
		want        Mode
		wantErr     error
	}
	none, login, full, strict := ModeNone, ModeLoginOnly, ModeFull, ModeStrict
	notSup, required, invalid := ErrServerNoEncryption, ErrServerRequiresEncryption, ErrInvalidEncryption
	tests := map[string]row{
		// Client rule (docs/protocol.md, section "PRELOGIN"): after OFF, OFF = login-only, ON/REQ = full, NOT_SUP = none.
		"OFF/OFF":     {EncryptOff, EncryptOff, login, nil},
		"OFF/ON":      {EncryptOff, EncryptOn, full, nil},
		"OFF/REQ":     {EncryptOff, EncryptReq, full, nil},
		"OFF/NOT_SUP": {EncryptOff, EncryptNotSup, none, nil},
		// After ON, OFF or NOT_SUP is an error: the client required encryption.
		"ON/OFF":     {EncryptOn, EncryptOff, none, notSup},
		"ON/ON":      {EncryptOn, EncryptOn, full, nil},
		"ON/REQ":     {EncryptOn, EncryptReq, full, nil},
		"ON/NOT_SUP": {EncryptOn, EncryptNotSup, none, notSup},
		// REQ behaves as ON.
		"REQ/OFF":     {EncryptReq, EncryptOff, none, notSup},
		"REQ/ON":      {EncryptReq, EncryptOn, full, nil},
		"REQ/REQ":     {EncryptReq, EncryptReq, full, nil},
		"REQ/NOT_SUP": {EncryptReq, EncryptNotSup, none, notSup},
		// NOT_SUP: only NOT_SUP is acceptable; anything else means the server requires TLS.
		"NOT_SUP/OFF":     {EncryptNotSup, EncryptOff, none, required},
		"NOT_SUP/ON":      {EncryptNotSup, EncryptOn, none, required},
		"NOT_SUP/REQ":     {EncryptNotSup, EncryptReq, none, required},
		"NOT_SUP/NOT_SUP": {EncryptNotSup, EncryptNotSup, none, nil},
		// CLIENT_CERT: the base row, but OFF|CERT needs TLS.
		"OFF|CERT/OFF":     {EncryptOff | cert, EncryptOff, login, nil},
		"OFF|CERT/ON":      {EncryptOff | cert, EncryptOn, full, nil},
		"OFF|CERT/REQ":     {EncryptOff | cert, EncryptReq, full, nil},
		"OFF|CERT/NOT_SUP": {EncryptOff | cert, EncryptNotSup, none, notSup},
		"ON|CERT/OFF":      {EncryptOn | cert, EncryptOff, none, notSup},
		"ON|CERT/ON":       {EncryptOn | cert, EncryptOn, full, nil},
		"ON|CERT/REQ":      {EncryptOn | cert, EncryptReq, full, nil},
		"ON|CERT/NOT_SUP":  {EncryptOn | cert, EncryptNotSup, none, notSup},
		"REQ|CERT/OFF":     {EncryptReq | cert, EncryptOff, none, notSup},
		"REQ|CERT/ON":      {EncryptReq | cert, EncryptOn, full, nil},
		"REQ|CERT/REQ":     {EncryptReq | cert, EncryptReq, full, nil},
		"REQ|CERT/NOT_SUP": {EncryptReq | cert, EncryptNotSup, none, notSup},
		// STRICT (go-mssqldb, TDS 8.0): TLS is already up, the reply is ignored.
		"STRICT/OFF":          {EncryptStrict, EncryptOff, strict, nil},
		"STRICT/ON":           {EncryptStrict, EncryptOn, strict, nil},
		"STRICT/REQ":          {EncryptStrict, EncryptReq, strict, nil},
		"STRICT/NOT_SUP":      {EncryptStrict, EncryptNotSup, strict, nil},
		"STRICT/invalid":      {EncryptStrict, 0x77, strict, nil},
		"STRICT|CERT/NOT_SUP": {EncryptStrict | cert, EncryptNotSup, strict, nil},
		// Values that are not client values.
		"NOT_SUP|CERT/NOT_SUP": {EncryptNotSup | cert, EncryptNotSup, none, invalid},
		"NOT_SUP|CERT/ON":      {EncryptNotSup | cert, EncryptOn, none, invalid},
		"0x05/ON":              {0x05, EncryptOn, none, invalid},
		"0x20/OFF":             {0x20, EncryptOff, none, invalid},
		// Replies a server never sends.
		"OFF/STRICT":     {EncryptOff, EncryptStrict, none, invalid},
		"ON/ON|CERT":     {EncryptOn, EncryptOn | cert, none, invalid},
		"OFF/OFF|CERT":   {EncryptOff, EncryptOff | cert, none, invalid},
		"NOT_SUP/0x20":   {EncryptNotSup, 0x20, none, invalid},
		"REQ/0xFF":       {EncryptReq, 0xFF, none, invalid},
		"ON|CERT/0x05":   {EncryptOn | cert, 0x05, none, invalid},
		"OFF|CERT/0x80":  {EncryptOff | cert, 0x80, none, invalid},
		"REQ|CERT/0x83":  {EncryptReq | cert, 0x83, none, invalid},
		"NOT_SUP/STRICT": {EncryptNotSup, EncryptStrict, none, invalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ClientOutcome(tc.sent, tc.reply)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("ClientOutcome(%v, %v) error = %v, want %v", tc.sent, tc.reply, err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("ClientOutcome(%v, %v) = %v, want %v", tc.sent, tc.reply, got, tc.want)
			}
			if err == nil {
				return
			}
			var ne *NegotiationError
			if !errors.As(err, &ne) || ne.Sent != tc.sent || ne.Reply != tc.reply {
				t.Fatalf("error %#v does not carry the values", err)
			}
			if want := "client sent " + tc.sent.String() + ", server replied " + tc.reply.String(); !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %q", err, want)
			}
		})
	}
}

// TestServerReply is the server's view: every client value against every server setting.
func TestServerReply(t *testing.T) {
	type row struct {
		setting, client Encryption
		reply           Encryption
		mode            Mode
		closeAfter      bool
	}
	none, login, full := ModeNone, ModeLoginOnly, ModeFull
	tests := map[string]row{
		// Negotiation table of docs/protocol.md (section "PRELOGIN"), column by column.
		"OFF/OFF":         {EncryptOff, EncryptOff, EncryptOff, login, false},
		"OFF/ON":          {EncryptOff, EncryptOn, EncryptOn, full, false},
		"OFF/NOT_SUP":     {EncryptOff, EncryptNotSup, EncryptNotSup, none, false},
		"OFF/REQ":         {EncryptOff, EncryptReq, EncryptOn, full, false},
		"ON/OFF":          {EncryptOn, EncryptOff, EncryptReq, full, false},
		"ON/ON":           {EncryptOn, EncryptOn, EncryptOn, full, false},
		"ON/NOT_SUP":      {EncryptOn, EncryptNotSup, EncryptReq, none, true},
		"ON/REQ":          {EncryptOn, EncryptReq, EncryptOn, full, false},
		"NOT_SUP/OFF":     {EncryptNotSup, EncryptOff, EncryptNotSup, none, false},
		"NOT_SUP/ON":      {EncryptNotSup, EncryptOn, EncryptNotSup, none, true},
		"NOT_SUP/NOT_SUP": {EncryptNotSup, EncryptNotSup, EncryptNotSup, none, false},
		"NOT_SUP/REQ":     {EncryptNotSup, EncryptReq, EncryptNotSup, none, true},
		// CLIENT_CERT rows (MS-TDS 2.2.6.5).
		"OFF/OFF|CERT":         {EncryptOff, EncryptOff | cert, EncryptOff, login, false},
		"ON/OFF|CERT":          {EncryptOn, EncryptOff | cert, EncryptReq, full, false},
		"NOT_SUP/OFF|CERT":     {EncryptNotSup, EncryptOff | cert, EncryptNotSup, none, true},
		"OFF/ON|CERT":          {EncryptOff, EncryptOn | cert, EncryptOn, full, false},
		"ON/ON|CERT":           {EncryptOn, EncryptOn | cert, EncryptOn, full, false},
		"NOT_SUP/ON|CERT":      {EncryptNotSup, EncryptOn | cert, EncryptNotSup, none, true},
		"OFF/REQ|CERT":         {EncryptOff, EncryptReq | cert, EncryptOn, full, false},
		"ON/REQ|CERT":          {EncryptOn, EncryptReq | cert, EncryptOn, full, false},
		"NOT_SUP/REQ|CERT":     {EncryptNotSup, EncryptReq | cert, EncryptNotSup, none, true},
		"OFF/NOT_SUP|CERT":     {EncryptOff, EncryptNotSup | cert, EncryptReq, none, true},
		"ON/NOT_SUP|CERT":      {EncryptOn, EncryptNotSup | cert, EncryptReq, none, true},
		"NOT_SUP/NOT_SUP|CERT": {EncryptNotSup, EncryptNotSup | cert, EncryptReq, none, true},
		// STRICT is answered like REQ.
		"OFF/STRICT":          {EncryptOff, EncryptStrict, EncryptOn, full, false},
		"ON/STRICT":           {EncryptOn, EncryptStrict, EncryptOn, full, false},
		"NOT_SUP/STRICT":      {EncryptNotSup, EncryptStrict, EncryptNotSup, none, true},
		"ON/STRICT|CERT":      {EncryptOn, EncryptStrict | cert, EncryptOn, full, false},
		"NOT_SUP/STRICT|CERT": {EncryptNotSup, EncryptStrict | cert, EncryptNotSup, none, true},
		// Unknown client values: REQ and close.
		"OFF/0x05":     {EncryptOff, 0x05, EncryptReq, none, true},
		"ON/0x20":      {EncryptOn, 0x20, EncryptReq, none, true},
		"NOT_SUP/0xFF": {EncryptNotSup, 0xFF, EncryptReq, none, true},
		// Settings: the CERT bit is ignored; REQ and STRICT act as ON; unknown ones refuse.
		"OFF|CERT/OFF": {EncryptOff | cert, EncryptOff, EncryptOff, login, false},
		"REQ/OFF":      {EncryptReq, EncryptOff, EncryptReq, full, false},
		"STRICT/OFF":   {EncryptStrict, EncryptOff, EncryptReq, full, false},
		"0x42/NOT_SUP": {0x42, EncryptNotSup, EncryptReq, none, true},
		"0x42/OFF":     {0x42, EncryptOff, EncryptReq, none, true},
		"0x05/ON":      {0x05, EncryptOn, EncryptReq, none, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			reply, mode, closeAfter := ServerReply(tc.setting, tc.client)
			if reply != tc.reply || mode != tc.mode || closeAfter != tc.closeAfter {
				t.Fatalf("ServerReply(%v, %v) = %v, %v, %v; want %v, %v, %v", tc.setting, tc.client,
					reply, mode, closeAfter, tc.reply, tc.mode, tc.closeAfter)
			}
		})
	}
}

// TestNegotiationAgrees checks the two views against each other for every possible client value
// and every server setting, every byte value included: when the server goes on, the client
// reaches the same mode from the reply; when the server closes, the client sees an error. A
// STRICT client ignores the reply and is in strict mode whatever the server does. A value that
// is not a setting makes the server refuse every client.
func TestNegotiationAgrees(t *testing.T) {
	for s := range 256 {
		setting := Encryption(s)
		for c := range 256 {
			client := Encryption(c)
			reply, mode, closeAfter := ServerReply(setting, client)
			if !mode.Valid() || closeAfter && mode != ModeNone || mode == ModeStrict {
				t.Fatalf("%v/%v: ServerReply = %v, %v, %v", setting, client, reply, mode, closeAfter)
			}
			got, err := ClientOutcome(client, reply)
			switch {
			case !setting.Known():
				if !closeAfter {
					t.Errorf("%v/%v: setting is not a setting, but the server goes on (%v)", setting, client, mode)
				}
			case validClientValue(client) && client.Base() == EncryptStrict:
				if err != nil || got != ModeStrict {
					t.Errorf("%v/%v: STRICT client = %v, %v; want strict", setting, client, got, err)
				}
			case closeAfter:
				if err == nil {
					t.Errorf("%v/%v: server closes (reply %v) but client = %v, %v", setting, client, reply, got, err)
				}
			default:
				if err != nil || got != mode {
					t.Errorf("%v/%v: server says %v (reply %v), client = %v, %v", setting, client, mode, reply, got, err)
				}
			}
		}
	}
}

func TestNegotiationErrorMessages(t *testing.T) {
	tests := map[string]struct {
		sent, reply Encryption
		want        string
	}{
		"client required, server NOT_SUP": {EncryptOn, EncryptNotSup,
			"prelogin: server does not support encryption, client requires it: client sent ON, server replied NOT_SUP (the client required encryption; the server does not support it)"},
		"client required, server login only": {EncryptOn, EncryptOff,
			"prelogin: server does not support encryption, client requires it: client sent ON, server replied OFF (the client required encryption; the server offers it for the login only)"},
		"server requires": {EncryptNotSup, EncryptReq,
			"prelogin: server requires encryption, client cannot encrypt: client sent NOT_SUP, server replied REQ (the server requires encryption; the client said it cannot encrypt)"},
		"server requires login encryption": {EncryptNotSup, EncryptOff,
			"prelogin: server requires encryption, client cannot encrypt: client sent NOT_SUP, server replied OFF (the server requires encryption of the login; the client said it cannot encrypt)"},
		"invalid reply": {EncryptOn, EncryptOn | cert,
			"prelogin: invalid ENCRYPTION value: client sent ON, server replied ON|CLIENT_CERT"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ClientOutcome(tc.sent, tc.reply)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
	if !errors.Is(&NegotiationError{Err: ErrServerRequiresEncryption}, ErrServerRequiresEncryption) {
		t.Fatalf("ErrServerRequiresEncryption is not ErrServerRequiresEncryption")
	}
}
