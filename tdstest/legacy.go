package tdstest

// Token encoders at the connection's TDS version: TDS 7.0 and 7.1 clients (isLegacyTDS) get the
// shorter fields of before TDS 7.2. Before login the version is 0, which encodes as 7.2+.

func (c *conn) tokenVersion() uint32 {
	if c.tdsVersion == 0 {
		return verTDS74
	}
	return c.tdsVersion
}

func (c *conn) appendDone(dst []byte, status, curCmd uint16, rows uint64) []byte {
	return appendDoneTokenFor(dst, c.tokenVersion(), tokenDone, status, curCmd, rows)
}

func (c *conn) appendDoneToken(dst []byte, typ byte, status, curCmd uint16, rows uint64) []byte {
	return appendDoneTokenFor(dst, c.tokenVersion(), typ, status, curCmd, rows)
}

func (c *conn) appendMessage(dst []byte, typ byte, m serverMessage) []byte {
	return appendMessageFor(dst, c.tokenVersion(), typ, m)
}

func (c *conn) appendColMetadata(dst []byte, cols []column) []byte {
	return appendColMetadataFor(dst, c.tokenVersion(), cols)
}

// appendRefusal appends the ERROR token for a request refused as a whole (SQL Server's number
// for a *sqlError, 50000 otherwise) and records its number as @@ERROR.
func (c *conn) appendRefusal(dst []byte, err error) []byte {
	msg := errorMessage(err)
	c.lastError = msg.Number
	return c.appendMessage(dst, tokenError, msg)
}
