package prelogin

// scanReply checks payload p, a server's PRELOGIN reply, by the rules a client applies to one
// (see the package documentation, "Reading a server's reply") and returns the offset of its
// ENCRYPTION byte. Only the option table's framing, every option's bounds and the ENCRYPTION
// option are checked: a client acts on nothing else of a reply. It does not allocate unless
// it returns an error.
func scanReply(p []byte) (int, error) {
	n, err := tableLen(p)
	if err != nil {
		return 0, err
	}
	dataStart := n*EntrySize + 1
	enc := -1 // table index of the ENCRYPTION entry
	for i := range n {
		t, off, ln := entry(p, i)
		if off+ln > len(p) {
			return 0, &FormatError{Err: ErrOptionBounds, Token: t, Offset: i * EntrySize,
				DataOffset: off, DataLength: ln, PayloadLen: len(p)}
		}
		if t != TokenEncryption {
			continue
		}
		switch {
		case enc >= 0:
			return 0, &FormatError{Err: ErrDuplicateOption, Token: t, Offset: i * EntrySize,
				Other: t, OtherAt: enc * EntrySize, PayloadLen: len(p)}
		case ln != EncryptionSize:
			return 0, &FormatError{Err: ErrOptionLength, Token: t, Offset: i * EntrySize,
				DataOffset: off, DataLength: ln, PayloadLen: len(p)}
		case off < dataStart:
			return 0, &FormatError{Err: ErrOptionBounds, Token: t, Offset: i * EntrySize,
				DataOffset: off, DataLength: ln, PayloadLen: len(p)}
		}
		enc = i
	}
	if enc < 0 {
		return 0, &FormatError{Err: ErrNoEncryptionOption, Token: TokenEncryption, Offset: -1, OtherAt: -1, PayloadLen: len(p)}
	}
	_, at, _ := entry(p, enc)
	for i := range n {
		if t, off, ln := entry(p, i); i != enc && off <= at && at < off+ln {
			return 0, &FormatError{Err: ErrOptionOverlap, Token: t, Offset: i * EntrySize,
				DataOffset: off, DataLength: ln, PayloadLen: len(p), Other: TokenEncryption, OtherAt: enc * EntrySize}
		}
	}
	return at, nil
}

// ReplyEncryptionOf returns the ENCRYPTION value of a server's PRELOGIN reply. It checks the
// reply as a client reads one, which tolerates more than Decode (see the package
// documentation): it fails with a *FormatError wrapping ErrNoTerminator, ErrTruncatedTable,
// ErrOptionBounds, ErrNoEncryptionOption, ErrDuplicateOption (ENCRYPTION twice),
// ErrOptionLength (ENCRYPTION not one byte) or ErrOptionOverlap (another option's data holds
// the ENCRYPTION byte). It does not allocate unless it fails.
func ReplyEncryptionOf(payload []byte) (Encryption, error) {
	at, err := scanReply(payload)
	if err != nil {
		return 0, err
	}
	return Encryption(payload[at]), nil
}

// SetReplyEncryption changes the ENCRYPTION byte of a server's PRELOGIN reply in place, to e,
// and returns the value it replaced: what a client that runs TLS itself does before handing
// the reply to a driver whose own encryption is off. Exactly that one byte changes, and it is
// neither part of the option table nor of another option's data, so every other option reads
// as the server sent it. The reply is first checked as ReplyEncryptionOf checks it; on error
// the payload is not modified. It does not allocate unless it fails.
func SetReplyEncryption(payload []byte, e Encryption) (Encryption, error) {
	at, err := scanReply(payload)
	if err != nil {
		return 0, err
	}
	old := Encryption(payload[at])
	payload[at] = byte(e)
	return old, nil
}
