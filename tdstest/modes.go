package tdstest

import "github.com/tdsbridge/tdsbridge/prelogin"

// Mode is one way a go-mssqldb connection to a Server ends up encrypted (see "Encryption" in the
// package documentation): a server configuration and the value of go-mssqldb's encrypt DSN
// parameter that lead to it. A test that must hold in every mode ranges over Modes.
type Mode struct {
	// Name is the [prelogin.Mode] as its String spells it, which is how the server's log
	// names it: "none", "login-only", "full" or "strict".
	Name string
	// Config gives the server the Encryption setting of this mode; set its other fields as the
	// test needs.
	Config Config
	// Encrypt is go-mssqldb's encrypt DSN value that asks for this mode.
	Encrypt string
}

// modeSettings holds, for every [prelogin.Mode], the server setting and the encrypt value that
// lead to it (a test checks that none is missing).
var modeSettings = [...]struct {
	server  Encryption
	encrypt string
}{
	prelogin.ModeNone:      {EncryptNotSup, "disable"},
	prelogin.ModeLoginOnly: {EncryptOff, "false"},
	prelogin.ModeFull:      {EncryptOn, "true"},
	prelogin.ModeStrict:    {EncryptStrict, "strict"},
}

// Modes returns every mode, in the order of the [prelogin.Mode] constants: none, login-only,
// full and strict. Each call returns a new slice.
func Modes() []Mode {
	ms := make([]Mode, len(modeSettings))
	for i, s := range modeSettings {
		ms[i] = Mode{Name: prelogin.Mode(i).String(), Config: Config{Encryption: s.server},
			Encrypt: s.encrypt}
	}
	return ms
}
