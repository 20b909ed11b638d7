package prelogin

// findEncryption checks payload like Decode does and returns the offset of the ENCRYPTION byte.
func findEncryption(payload []byte) (int, error) {
	n, err := scanTable(payload)
	if err != nil {
		return 0, err
	}
	for i := range n {
		if t, off, _ := entry(payload, i); t == TokenEncryption {
			return off, nil // scanTable checked that its length is 1
		}
	}
	return 0, &FormatError{Err: ErrNoEncryptionOption, Token: TokenEncryption, Offset: -1, OtherAt: -1, PayloadLen: len(payload)}
}

// EncryptionOf returns the ENCRYPTION value of an encoded PRELOGIN payload. It checks the payload
// as Decode does and fails with the same errors, or with ErrNoEncryptionOption when the option is
// absent. It does not allocate unless it fails. For a server's reply, [ReplyEncryptionOf]
// accepts what servers send that Decode refuses.
func EncryptionOf(payload []byte) (Encryption, error) {
	off, err := findEncryption(payload)
	if err != nil {
		return 0, err
	}
	return Encryption(payload[off]), nil
}

// SetEncryption changes the ENCRYPTION byte of an encoded PRELOGIN payload in place, to e, and
// returns the value it replaced. Exactly that one byte changes; everything else, including a
// non-canonical layout, stays as it was. It first checks the payload as Decode does; on error
// (the same errors as Decode, or ErrNoEncryptionOption when the option is absent) the payload is not
// modified. It does not allocate unless it fails. For a server's reply, use
// [SetReplyEncryption].
func SetEncryption(payload []byte, e Encryption) (Encryption, error) {
	off, err := findEncryption(payload)
	if err != nil {
		return 0, err
	}
	old := Encryption(payload[off])
	payload[off] = byte(e)
	return old, nil
}
