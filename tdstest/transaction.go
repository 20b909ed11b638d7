package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Transaction manager request types (MS-TDS 2.2.6.9).
const (
	tmBeginXact    = 5
	tmCommitXact   = 7
	tmRollbackXact = 8
	fBeginXact     = 0x01
)

// ENVCHANGE types of transactions.
const (
	envBeginTran    = 8
	envCommitTran   = 9
	envRollbackTran = 10
)

// The server keeps no data, so a transaction is only a descriptor: the outermost BEGIN hands out
// a new one, the COMMIT that ends the outermost level or any ROLLBACK ends it, each confirmed
// with the ENVCHANGE a real server sends (clients such as go-mssqldb and pytds put the
// descriptor in the headers of later requests). Nested BEGINs and inner COMMITs only change
// @@TRANCOUNT (session.tranCount), as in SQL Server.

// appendEnvChangeTran appends ENVCHANGE typ with B_VARBYTE values: new and old descriptors,
// 0 meaning empty.
func appendEnvChangeTran(dst []byte, typ byte, newID, oldID uint64) []byte {
	dst, start := beginLenToken(dst, tokenEnvChange)
	dst = append(dst, typ)
	for _, id := range []uint64{newID, oldID} {
		if id == 0 {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 8)
		dst = binary.LittleEndian.AppendUint64(dst, id)
	}
	return finishLenToken(dst, start)
}

// beginTran opens a transaction, appending its ENVCHANGE, or nests one level deeper in the open
// one (no token).
func (c *conn) beginTran(dst []byte) []byte {
	c.tranCount++
	if c.tranID != 0 {
		return dst
	}
	c.lastTranID++
	c.tranID = c.lastTranID
	return appendEnvChangeTran(dst, envBeginTran, c.tranID, 0)
}

// endTran commits or rolls back: a COMMIT inside nested levels only leaves one level; a COMMIT
// of the outermost level and every ROLLBACK end the transaction and append its ENVCHANGE. With
// no transaction open it does nothing.
func (c *conn) endTran(dst []byte, commit bool) []byte {
	if c.tranID == 0 {
		return dst
	}
	if commit && c.tranCount > 1 {
		c.tranCount--
		return dst
	}
	typ := byte(envRollbackTran)
	if commit {
		typ = envCommitTran
	}
	dst = appendEnvChangeTran(dst, typ, 0, c.tranID)
	if commit {
		c.logf("transaction %d committed", c.tranID)
	} else {
		c.logf("transaction %d rolled back", c.tranID)
	}
	c.tranID, c.tranCount = 0, 0
	return dst
}

// transactionRequest answers a transaction manager request: begin, commit and rollback (with an
// optional new transaction); other requests (DTC) get ERROR 50000.
func (c *conn) transactionRequest(payload []byte) error {
	p, err := skipAllHeaders(payload)
	if err != nil {
		return fmt.Errorf("transaction manager request: %w", err)
	}
	if len(p) < 2 {
		return errors.New("transaction manager request: no request type")
	}
	rq := binary.LittleEndian.Uint16(p)
	p = p[2:]
	b := c.scratch[:0]
	switch rq {
	case tmBeginXact:
		// IsolationLevel u8, Name B_VARCHAR
		if _, err := tranName(p, 1); err != nil {
			return err
		}
		b = c.beginTran(b)
	case tmCommitXact, tmRollbackXact:
		// Name B_VARCHAR, Flags u8, then with fBeginXact: IsolationLevel u8, NewName B_VARCHAR
		rest, err := tranName(p, 0)
		if err != nil {
			return err
		}
		if len(rest) < 1 {
			return errors.New("transaction manager request: no flags")
		}
		flags := rest[0]
		if flags&fBeginXact != 0 {
			if _, err := tranName(rest[1:], 1); err != nil {
				return err
			}
		}
		b = c.endTran(b, rq == tmCommitXact)
		if flags&fBeginXact != 0 {
			b = c.beginTran(b)
		}
	default:
		return c.refuse(fmt.Sprintf("tdstest: transaction manager request type %d is not supported (only begin, commit, rollback)", rq))
	}
	return c.writeTokens(c.appendDone(b, doneFinal, 0, 0))
}

// tranName skips skip bytes, then a B_VARCHAR name, and returns what follows.
func tranName(p []byte, skip int) ([]byte, error) {
	if len(p) < skip+1 {
		return nil, errors.New("transaction manager request: truncated")
	}
	p = p[skip:]
	n := 1 + 2*int(p[0])
	if len(p) < n {
		return nil, fmt.Errorf("transaction manager request: name of %d characters truncated", p[0])
	}
	return p[n:], nil
}
