package tdstest

// Mode is one way a go-mssqldb connection to a Server ends up encrypted (see "Encryption" in the
// package documentation): a server configuration and the value of go-mssqldb's encrypt DSN
// parameter that lead to it. A test that must hold in every mode ranges over Modes.
type Mode struct {
	// Name is the mode as the server's log names it: "none", "login-only", "full" or "strict".
	Name string
	// Config gives the server the Encryption setting of this mode; set its other fields as the
	// test needs.
	Config Config
	// Encrypt is go-mssqldb's encrypt DSN value that asks for this mode.
	Encrypt string
}

// Modes returns the four modes: none, login-only, full and strict, in that order. Each call
// returns a new slice.
func Modes() []Mode {
	return []Mode{
		{Name: modeNone.String(), Config: Config{Encryption: EncryptNotSup}, Encrypt: "disable"},
		{Name: modeLoginOnly.String(), Config: Config{Encryption: EncryptOff}, Encrypt: "false"},
		{Name: modeFull.String(), Config: Config{}, Encrypt: "true"},
		{Name: modeStrict.String(), Config: Config{Encryption: EncryptStrict}, Encrypt: "strict"},
	}
}
