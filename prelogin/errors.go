package prelogin

import (
	"errors"
	"strconv"
)

// Sentinel errors for malformed payloads. Decode, EncryptionOf and SetEncryption return them
// wrapped in a *FormatError; use errors.Is to test for them.
var (
	// ErrNoTerminator: the option table reaches the end of the payload without the 0xFF
	// terminator (this includes an empty payload).
	ErrNoTerminator = errors.New("prelogin: option table has no terminator")
	// ErrTruncatedTable: a table entry is cut short by the end of the payload.
	ErrTruncatedTable = errors.New("prelogin: option table entry truncated")
	// ErrOptionBounds: an option's data is not inside the data area (from the byte after the
	// terminator to the end of the payload), or an empty option's offset is past the end.
	ErrOptionBounds = errors.New("prelogin: option data out of bounds")
	// ErrOptionOverlap: the non-empty data of two options overlap.
	ErrOptionOverlap = errors.New("prelogin: option data overlap")
	// ErrOptionLength: a fixed-size option has the wrong length.
	ErrOptionLength = errors.New("prelogin: option has the wrong length")
	// ErrDuplicateOption: a token appears twice in the option table (Decode) or in
	// Message.Unknown (Encode).
	ErrDuplicateOption = errors.New("prelogin: duplicate option")
	// ErrVersionNotFirst: VERSION is present but not the first table entry.
	ErrVersionNotFirst = errors.New("prelogin: VERSION is not the first option")
	// ErrNoEncryptionOption: the payload has no ENCRYPTION option (EncryptionOf, SetEncryption).
	ErrNoEncryptionOption = errors.New("prelogin: no ENCRYPTION option")
	// ErrInvalidOption: Encode was given an unknown option whose token is a known one or the
	// terminator.
	ErrInvalidOption = errors.New("prelogin: invalid option")
	// ErrTooLarge: the encoded payload would not fit in 65535 bytes (offsets are 16 bits).
	ErrTooLarge = errors.New("prelogin: payload too large")
)

// Sentinel errors for the negotiation, wrapped in a *NegotiationError by ClientOutcome.
var (
	// ErrServerNoEncryption: the client required encryption and the server does not
	// provide it: the client sent ON or REQ (with or without CLIENT_CERT) and the server replied
	// NOT_SUP or OFF, or the client sent OFF|CLIENT_CERT and the server replied NOT_SUP.
	ErrServerNoEncryption = errors.New("prelogin: server does not support encryption, client requires it")
	// ErrServerRequiresEncryption: the server requires encryption (it replied ON, REQ, or OFF for
	// login-only) and the client cannot encrypt (it sent NOT_SUP).
	ErrServerRequiresEncryption = errors.New("prelogin: server requires encryption, client cannot encrypt")
	// ErrInvalidEncryption: a value outside the negotiation table: an unknown base value, a
	// reply carrying the CLIENT_CERT bit or STRICT, or NOT_SUP with the CLIENT_CERT bit.
	ErrInvalidEncryption = errors.New("prelogin: invalid ENCRYPTION value")
)

// FormatError reports a malformed payload (Decode, EncryptionOf, SetEncryption) or a Message
// that cannot be encoded (Encode). It says what (Err, a sentinel of this package) and where
// (the option and the byte offset of its table entry).
type FormatError struct {
	Err    error // the sentinel: ErrNoTerminator, ErrOptionBounds, ...
	Token  Token // the offending option; TokenTerminator when the terminator is missing
	Offset int   // byte offset of the offending table entry in the payload; -1 when there is none (Encode, ErrNoEncryptionOption)

	DataOffset int   // the entry's declared data offset (ErrOptionBounds, ErrOptionOverlap)
	DataLength int   // the entry's declared data length (ErrOptionBounds, ErrOptionLength, ...)
	PayloadLen int   // length of the payload (decoding) or of the encoded size (ErrTooLarge)
	Other      Token // the other option (ErrOptionOverlap, ErrDuplicateOption)
	OtherAt    int   // byte offset of the other option's table entry (ErrOptionOverlap, ErrDuplicateOption; -1 for Encode)
}

func (e *FormatError) Error() string {
	s := e.Err.Error() + " ("
	at := func(off int) string {
		if off < 0 {
			return ""
		}
		return " at byte " + strconv.Itoa(off)
	}
	itoa := strconv.Itoa
	switch e.Err {
	case ErrNoTerminator:
		s += "payload of " + itoa(e.PayloadLen) + " bytes ends where the next table entry should start" + at(e.Offset)
	case ErrTruncatedTable:
		s += "entry for " + e.Token.String() + at(e.Offset) + " needs 5 bytes, payload has " + itoa(e.PayloadLen)
	case ErrOptionBounds:
		s += e.Token.String() + at(e.Offset) + ": data [" + itoa(e.DataOffset) + ", " + itoa(e.DataOffset+e.DataLength) +
			") outside the data area of the " + itoa(e.PayloadLen) + "-byte payload"
	case ErrOptionOverlap:
		s += e.Token.String() + at(e.Offset) + ": data [" + itoa(e.DataOffset) + ", " + itoa(e.DataOffset+e.DataLength) +
			") overlaps that of " + e.Other.String() + at(e.OtherAt)
	case ErrOptionLength:
		s += e.Token.String() + at(e.Offset) + ": length " + itoa(e.DataLength) + ", want " + wantLength(e.Token)
	case ErrDuplicateOption:
		if e.Offset < 0 {
			s += e.Token.String() + " appears twice in Message.Unknown"
		} else {
			s += e.Token.String() + at(e.Offset) + " repeats the entry" + at(e.OtherAt)
		}
	case ErrInvalidOption:
		s += "Message.Unknown holds " + e.Token.String() + ", which is not an unknown option"
	case ErrVersionNotFirst:
		s += "VERSION" + at(e.Offset)
	case ErrNoEncryptionOption:
		s += "payload of " + itoa(e.PayloadLen) + " bytes"
	case ErrTooLarge:
		s += "encoded size " + itoa(e.PayloadLen) + " bytes, at most 65535"
	default:
		s += e.Token.String() + at(e.Offset)
	}
	return s + ")"
}

// Unwrap returns the sentinel.
func (e *FormatError) Unwrap() error { return e.Err }

// NegotiationError is returned by ClientOutcome when the ENCRYPTION values sent and received
// cannot lead to a connection. Err is ErrServerNoEncryption, ErrServerRequiresEncryption or
// ErrInvalidEncryption.
type NegotiationError struct {
	Err   error
	Sent  Encryption // the value the client sent
	Reply Encryption // the value the server replied
}

func (e *NegotiationError) Error() string {
	s := e.Err.Error() + ": client sent " + e.Sent.String() + ", server replied " + e.Reply.String()
	switch e.Err {
	case ErrServerNoEncryption:
		s += " (the client required encryption; the server "
		if e.Reply.Base() == EncryptOff {
			s += "offers it for the login only)"
		} else {
			s += "does not support it)"
		}
	case ErrServerRequiresEncryption:
		s += " (the server requires encryption"
		if e.Reply.Base() == EncryptOff {
			s += " of the login"
		}
		s += "; the client said it cannot encrypt)"
	}
	return s
}

// Unwrap returns the sentinel.
func (e *NegotiationError) Unwrap() error { return e.Err }
