package prelogin

// validClientValue reports whether a client may send e: OFF, ON, NOT_SUP, REQ or STRICT, with
// the CLIENT_CERT bit only on OFF, ON, REQ and STRICT.
func validClientValue(e Encryption) bool {
	return e.Known() && e != EncryptNotSup|EncryptClientCertBit
}

// ClientOutcome is the client's side of the negotiation table (MS-TDS 2.2.6.5; docs/protocol.md,
// section "PRELOGIN"): given the ENCRYPTION value it sent and the one the server replied, the
// mode the connection runs in.
//
//	sent \ reply      OFF          ON     REQ    NOT_SUP
//	OFF               login-only   full   full   none
//	ON, REQ           error        full   full   error    (ErrServerNoEncryption)
//	NOT_SUP           error        error  error  none     (ErrServerRequiresEncryption)
//
// The CLIENT_CERT bit in sent does not change the row, except that OFF|CLIENT_CERT (0x80) with a
// NOT_SUP reply is ErrServerNoEncryption: certificate authentication needs TLS. STRICT
// (0x04, with or without the bit) gives ModeStrict whatever the reply: in TDS 8.0 TLS is already
// established and the ENCRYPTION option is ignored (go-mssqldb ignores the reply too). On
// success the Mode is valid; on error it is ModeNone.
//
// Errors, each a *NegotiationError naming both values: ErrServerNoEncryption (the client
// required encryption, the server said NOT_SUP, or OFF to a client that sent ON or REQ),
// ErrServerRequiresEncryption (the client sent NOT_SUP, the server requires encryption: ON, REQ, or
// OFF meaning login-only), ErrInvalidEncryption (sent is not a client value: unknown, or
// NOT_SUP|CLIENT_CERT; or the reply is not OFF, ON, REQ or NOT_SUP: servers never set the
// CLIENT_CERT bit or send STRICT).
func ClientOutcome(sent, reply Encryption) (Mode, error) {
	fail := func(err error) (Mode, error) {
		return ModeNone, &NegotiationError{Err: err, Sent: sent, Reply: reply}
	}
	if !validClientValue(sent) {
		return fail(ErrInvalidEncryption)
	}
	switch sent.Base() {
	case EncryptStrict:
		return ModeStrict, nil
	case EncryptOff:
		switch reply {
		case EncryptOff:
			return ModeLoginOnly, nil
		case EncryptOn, EncryptReq:
			return ModeFull, nil
		case EncryptNotSup:
			if sent.ClientCert() {
				return fail(ErrServerNoEncryption)
			}
			return ModeNone, nil
		default:
			return fail(ErrInvalidEncryption)
		}
	case EncryptOn, EncryptReq:
		switch reply {
		case EncryptOn, EncryptReq:
			return ModeFull, nil
		case EncryptOff, EncryptNotSup:
			return fail(ErrServerNoEncryption)
		default:
			return fail(ErrInvalidEncryption)
		}
	case EncryptNotSup:
		switch reply {
		case EncryptNotSup:
			return ModeNone, nil
		case EncryptOff, EncryptOn, EncryptReq:
			return fail(ErrServerRequiresEncryption)
		default:
			return fail(ErrInvalidEncryption)
		}
	default:
		return fail(ErrInvalidEncryption)
	}
}

// ServerReply is the server's side of the negotiation table (MS-TDS 2.2.6.5; docs/protocol.md,
// section "PRELOGIN"): given the server's setting and the ENCRYPTION value the client sent, the
// value to reply, the mode, and whether to close the connection after sending the reply
// (mode is then ModeNone).
//
//	client \ setting   OFF                 ON                  NOT_SUP
//	OFF                OFF  login-only     REQ full            NOT_SUP none
//	ON, REQ            ON   full           ON  full            NOT_SUP close
//	NOT_SUP            NOT_SUP none        REQ close           NOT_SUP none
//
// The setting is OFF (encryption available, login only unless the client asks for more), ON
// (encryption required) or NOT_SUP; its CLIENT_CERT bit is ignored, and REQ and STRICT act as
// ON. Any other setting is not a setting: the reply is REQ and the server closes. Client values
// with the CLIENT_CERT bit follow their base row, except that OFF|CLIENT_CERT against NOT_SUP
// closes (MS-TDS: certificate authentication needs TLS). STRICT is answered like REQ, with
// ModeFull: a server tells TDS 8.0 (ModeStrict) from the connection's first byte, before any
// PRELOGIN, so ServerReply never returns ModeStrict. Values that are not client values
// (NOT_SUP|CLIENT_CERT, unknown ones) get REQ and close, as MS-TDS prescribes for
// NOT_SUP|CLIENT_CERT.
func ServerReply(setting, client Encryption) (reply Encryption, mode Mode, closeAfter bool) {
	const refuse = EncryptReq
	switch setting.Base() {
	case EncryptOff, EncryptNotSup, EncryptOn:
		setting = setting.Base()
	case EncryptReq, EncryptStrict:
		setting = EncryptOn
	default:
		return refuse, ModeNone, true
	}
	if !validClientValue(client) {
		return refuse, ModeNone, true
	}
	switch client.Base() {
	case EncryptOff:
		switch setting {
		case EncryptOff:
			return EncryptOff, ModeLoginOnly, false
		case EncryptOn:
			return EncryptReq, ModeFull, false
		case EncryptNotSup:
			return EncryptNotSup, ModeNone, client.ClientCert()
		default:
			return refuse, ModeNone, true
		}
	case EncryptOn, EncryptReq, EncryptStrict:
		switch setting {
		case EncryptOff, EncryptOn:
			return EncryptOn, ModeFull, false
		case EncryptNotSup:
			return EncryptNotSup, ModeNone, true
		default:
			return refuse, ModeNone, true
		}
	case EncryptNotSup:
		switch setting {
		case EncryptOff, EncryptNotSup:
			return EncryptNotSup, ModeNone, false
		case EncryptOn:
			return EncryptReq, ModeNone, true
		default:
			return refuse, ModeNone, true
		}
	default:
		return refuse, ModeNone, true
	}
}
