package prelogin

import "strconv"

// Outcome is what a PRELOGIN exchange decides about TLS.
type Outcome uint8

const (
	// OutcomeNone: no TLS; the connection stays in plaintext.
	OutcomeNone Outcome = iota
	// OutcomeLoginOnly: TLS handshake inside PRELOGIN packets, then only the first packet of
	// LOGIN7 is encrypted; everything after it is plaintext.
	OutcomeLoginOnly
	// OutcomeFull: TLS handshake inside PRELOGIN packets, then every packet is encrypted. With
	// EncryptStrict it means TLS is already in place (TDS 8.0) and stays.
	OutcomeFull
)

// String returns "none", "login-only", "full", or "Outcome(n)".
func (o Outcome) String() string {
	switch o {
	case OutcomeNone:
		return "none"
	case OutcomeLoginOnly:
		return "login-only"
	case OutcomeFull:
		return "full"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// validClientValue reports whether a client may send e: OFF, ON, NOT_SUP, REQ or STRICT, with
// the CLIENT_CERT bit only on OFF, ON, REQ and STRICT.
func validClientValue(e Encryption) bool {
	return e.Known() && e != EncryptNotSup|EncryptClientCertBit
}

// ClientOutcome is the client's side of the negotiation table (MS-TDS 2.2.6.5; docs/protocol.md,
// section "PRELOGIN"): given the ENCRYPTION value it sent and the one the server replied, what it
// must do.
//
//	sent \ reply      OFF          ON     REQ    NOT_SUP
//	OFF               login-only   full   full   none
//	ON, REQ           error        full   full   error    (ErrServerNoEncryption)
//	NOT_SUP           error        error  error  none     (ErrServerRequiresEncryption)
//
// The CLIENT_CERT bit in sent does not change the row, except that OFF|CLIENT_CERT (0x80) with a
// NOT_SUP reply is ErrServerNoEncryption: certificate authentication needs TLS. STRICT
// (0x04, with or without the bit) gives OutcomeFull whatever the reply: in TDS 8.0 TLS is already
// established and the ENCRYPTION option is ignored (go-mssqldb ignores the reply too).
//
// Errors, each a *NegotiationError naming both values: ErrServerNoEncryption (the client
// required encryption, the server said NOT_SUP, or OFF to a client that sent ON or REQ),
// ErrServerRequiresEncryption (the client sent NOT_SUP, the server requires encryption: ON, REQ, or
// OFF meaning login-only), ErrInvalidEncryption (sent is not a client value: unknown, or
// NOT_SUP|CLIENT_CERT; or the reply is not OFF, ON, REQ or NOT_SUP: servers never set the
// CLIENT_CERT bit or send STRICT).
func ClientOutcome(sent, reply Encryption) (Outcome, error) {
	fail := func(err error) (Outcome, error) {
		return OutcomeNone, &NegotiationError{Err: err, Sent: sent, Reply: reply}
	}
	if !validClientValue(sent) {
		return fail(ErrInvalidEncryption)
	}
	if sent.Base() == EncryptStrict {
		return OutcomeFull, nil
	}
	if reply > EncryptReq {
		return fail(ErrInvalidEncryption)
	}
	switch sent.Base() {
	case EncryptOff:
		switch reply {
		case EncryptOff:
			return OutcomeLoginOnly, nil
		case EncryptOn, EncryptReq:
			return OutcomeFull, nil
		}
		if sent.ClientCert() {
			return fail(ErrServerNoEncryption)
		}
		return OutcomeNone, nil
	case EncryptOn, EncryptReq:
		if reply == EncryptOn || reply == EncryptReq {
			return OutcomeFull, nil
		}
		return fail(ErrServerNoEncryption)
	default: // EncryptNotSup
		if reply == EncryptNotSup {
			return OutcomeNone, nil
		}
		return fail(ErrServerRequiresEncryption)
	}
}

// ServerReply is the server's side of the negotiation table (MS-TDS 2.2.6.5; docs/protocol.md,
// section "PRELOGIN"): given the server's setting and the ENCRYPTION value the client sent, the
// value to reply, the outcome, and whether to close the connection after sending the reply
// (outcome is then OutcomeNone).
//
//	client \ setting   OFF                 ON                  NOT_SUP
//	OFF                OFF  login-only     REQ full            NOT_SUP none
//	ON, REQ            ON   full           ON  full            NOT_SUP close
//	NOT_SUP            NOT_SUP none        REQ close           NOT_SUP none
//
// The setting is OFF (encryption available, login only unless the client asks for more), ON
// (encryption required) or NOT_SUP; its CLIENT_CERT bit is ignored, and any other value (REQ,
// STRICT, unknown) is treated as ON, the most demanding setting. Client values with the
// CLIENT_CERT bit follow their base row, except that OFF|CLIENT_CERT against NOT_SUP closes
// (MS-TDS: certificate authentication needs TLS). STRICT is answered like REQ. Values that are
// not client values (NOT_SUP|CLIENT_CERT, unknown ones) get REQ and close, as MS-TDS prescribes
// for NOT_SUP|CLIENT_CERT.
func ServerReply(setting, client Encryption) (reply Encryption, outcome Outcome, closeAfter bool) {
	switch setting.Base() {
	case EncryptOff, EncryptNotSup:
		setting = setting.Base()
	default:
		setting = EncryptOn
	}
	if !validClientValue(client) {
		return EncryptReq, OutcomeNone, true
	}
	switch client.Base() {
	case EncryptOff:
		switch setting {
		case EncryptOff:
			return EncryptOff, OutcomeLoginOnly, false
		case EncryptOn:
			return EncryptReq, OutcomeFull, false
		}
		return EncryptNotSup, OutcomeNone, client.ClientCert()
	case EncryptOn, EncryptReq, EncryptStrict:
		if setting == EncryptNotSup {
			return EncryptNotSup, OutcomeNone, true
		}
		return EncryptOn, OutcomeFull, false
	default: // EncryptNotSup
		if setting == EncryptOn {
			return EncryptReq, OutcomeNone, true
		}
		return EncryptNotSup, OutcomeNone, false
	}
}
