package login7

import (
	"errors"
	"fmt"
)

var (
	// ErrMalformed: Parse, Decode or DecodeFedAuth found a message that breaks the format.
	// Every such error is a *FormatError wrapping it.
	ErrMalformed = errors.New("login7: malformed LOGIN7")
	// ErrInvalidMessage: Encode was given a Message it cannot write (a string over its limit,
	// variable data past 64 KiB, a field the TDS version lacks).
	ErrInvalidMessage = errors.New("login7: cannot encode")
)

// FormatError says what is wrong with a message and where. Err is ErrMalformed (decoding) or
// ErrInvalidMessage (Encode).
type FormatError struct {
	Err    error
	Item   string // what is wrong: a field ("UserName"), a fixed field ("Length"), "FeatureExt", "FEDAUTH"
	Offset int    // byte offset of the item in the message (or in the data DecodeFedAuth got); -1 when none applies
	Detail string // the rest of the message, which starts with Item
}

func (e *FormatError) Error() string { return e.Err.Error() + ": " + e.Detail }

// Unwrap returns Err.
func (e *FormatError) Unwrap() error { return e.Err }

// malformed returns a *FormatError wrapping ErrMalformed; the text is item, a space and the
// formatted rest.
func malformed(item string, at int, format string, args ...any) error {
	return &FormatError{Err: ErrMalformed, Item: item, Offset: at, Detail: item + " " + fmt.Sprintf(format, args...)}
}

// invalid returns a *FormatError wrapping ErrInvalidMessage.
func invalid(item string, format string, args ...any) error {
	return &FormatError{Err: ErrInvalidMessage, Item: item, Offset: -1, Detail: item + " " + fmt.Sprintf(format, args...)}
}
