package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tdsbridge/tdsbridge/tds"
)

// envResetConnAck is the ENVCHANGE type that acknowledges RESETCONNECTION.
const envResetConnAck = 18

// resetSession handles the RESETCONNECTION bit of a request: the session goes back to its state
// after login (database, no transaction, no temporary tables, SET options off), and the response starts with ENVCHANGE 18.
func (c *conn) resetSession() {
	c.database, c.tranID = c.loginDB, 0
	c.nocount, c.fmtOnly, c.tables, c.bulk = false, false, nil, nil
	c.resetAck = true
}

// takeResetAck appends the pending RESETCONNECTION acknowledgement, if any.
func (c *conn) takeResetAck(b []byte) []byte {
	if !c.resetAck {
		return b
	}
	c.resetAck = false
	return append(b, tokenEnvChange, 3, 0, envResetConnAck, 0, 0)
}

// queryFault applies the fault configured for PhaseQuery to the request just read: a close,
// reset or stall ends the connection (done, with the *faultError), an error fault refuses the
// request (done, with what refuse returned), a mutation is armed to strike on the response's
// first packet.
func (c *conn) queryFault() (done bool, err error) {
	a, err := c.fault(PhaseQuery)
	switch {
	case err != nil:
		return true, err
	case a == ActionError:
		return true, c.refuse("tdstest: fault injected at query")
	case a.isMutation():
		c.sink.arm(PhaseQuery, a, 0)
	}
	return false, nil
}

// resultFault applies the fault configured for PhaseResult to the response about to be written:
// an error fault refuses the request (refused is true; err is what refuse returned), a close,
// reset, stall or mutation is armed to strike after the first packet of the response.
func (c *conn) resultFault() (refused bool, err error) {
	ra, ferr := c.fault(PhaseResult)
	switch {
	case ferr != nil, ra.isMutation():
		c.sink.arm(PhaseResult, ra, 1)
	case ra == ActionError:
		return true, c.refuse("tdstest: fault injected in the result")
	}
	return false, nil
}

// DONE CurCmd values.
const (
	curCmdSelect = 0xC1
	curCmdSet    = 0xBE
)

// batch answers one SQL batch: every statement's tokens in one tabular result message, streamed
// through the packet writer. A batch the recognizer refuses gets ERROR 50000 and a DONE with the
// error bit, and the connection stays usable.
func (c *conn) batch(text string) error {
	if done, err := c.queryFault(); done {
		return err
	}
	stmts, perr := parseBatch(text, c.sessionInfo())
	if perr == nil {
		if refused, err := c.resultFault(); refused {
			return err
		}
	}
	c.out.BeginMessage(tds.TypeTabularResult, 0)
	b := c.takeResetAck(c.scratch[:0])
	if perr != nil {
		c.logf("refused batch %q: %v", shorten(text), perr)
		b = c.appendErrorFor(b, perr)
		b = c.appendDone(b, doneError, 0, 0)
	}
	if _, err := c.out.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if perr == nil {
		if _, err := c.runStatements(stmts); err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	if err := c.out.EndMessage(); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	c.sink.disarm()
	return c.flush()
}

// sessionInfo is what statements read of the session.
func (c *conn) sessionInfo() sessionInfo {
	sess := sessionInfo{spid: c.spid, database: c.database, user: c.user, host: c.host, app: c.app}
	if c.tranID != 0 {
		sess.trancount = 1
	}
	return sess
}

// errorMessage is the ERROR token content for a refused request: SQL Server's number for a
// *sqlError, 50000 otherwise.
func errorMessage(err error) serverMessage {
	var se *sqlError
	if errors.As(err, &se) {
		return serverMessage{Number: se.Number, State: se.State, Class: se.Class, Text: se.Msg}
	}
	return serverMessage{Number: 50000, State: 1, Class: 16, Text: err.Error()}
}

// runEnd is how a run of statements ended.
type runEnd uint8

const (
	runDone      runEnd = iota // every statement ran
	runFailed                  // a statement failed; its ERROR and a DONE with the error bit were written
	runAttention               // an ATTENTION arrived; the DONE with the attention bit ended the response
)

func (e runEnd) String() string {
	switch e {
	case runDone:
		return "done"
	case runFailed:
		return "failed"
	case runAttention:
		return "attention"
	}
	return fmt.Sprintf("runEnd(%d)", uint8(e))
}

// runStatements writes the tokens of every statement. In a batch the last DONE is final; inside
// an RPC (c.inProc) every statement ends with DONEINPROC and the caller writes DONEPROC unless
// the run ended with an attention. A statement that fails at run time (a *sqlError, such as a
// missing table, or another refusal) gets its ERROR token and a DONE with the error bit, and
// ends the request, as SQL Server aborts a batch. The error is a write error.
func (c *conn) runStatements(stmts []statement) (runEnd, error) {
	for i, st := range stmts {
		status := uint16(doneFinal)
		if i < len(stmts)-1 || c.inProc {
			status = doneMore
		}
		err := c.statement(st, status)
		if errors.Is(err, errAttention) {
			return runAttention, nil
		}
		var se *sqlError
		if errors.As(err, &se) || errors.Is(err, errUnsupported) {
			c.logf("statement failed: %v", err)
			b := c.appendErrorFor(c.scratch[:0], err)
			// The request ends here: a batch's last DONE is final; inside an RPC, DONEPROC follows.
			end := uint16(doneError)
			if c.inProc {
				end |= doneMore
			}
			b = c.appendStmtDone(b, end, 0, 0)
			c.scratch = b[:0]
			_, err := c.out.Write(b)
			return runFailed, err
		}
		if err != nil {
			return runDone, err
		}
	}
	return runDone, nil
}

// appendStmtDone appends the DONE (DONEINPROC inside an RPC) that ends a statement. With
// SET NOCOUNT ON the count bit is dropped, as SQL Server does.
func (c *conn) appendStmtDone(dst []byte, status, curCmd uint16, rows uint64) []byte {
	if c.nocount {
		status &^= doneCount
	}
	if c.inProc {
		return c.appendDoneToken(dst, tokenDoneInProc, status, curCmd, rows)
	}
	return c.appendDone(dst, status, curCmd, rows)
}

// statement writes the tokens of one statement, ending with a DONE of the given status.
func (c *conn) statement(st statement, status uint16) error {
	b := c.scratch[:0]
	defer func() { c.scratch = b[:0] }()
	switch st.kind {
	case stmtSet:
		switch st.option {
		case "NOCOUNT":
			c.nocount = st.on
		case "FMTONLY":
			c.fmtOnly = st.on
		}
		b = c.appendStmtDone(b, status, curCmdSet, 0)
	case stmtTran:
		if st.begin {
			b = c.beginTran(b)
		} else {
			b = c.endTran(b, st.commit)
		}
		b = c.appendStmtDone(b, status, 0, 0)
	case stmtUse:
		old := c.database
		c.database = st.db
		b = appendEnvChangeString(b, envDatabase, st.db, old)
		b = c.appendMessage(b, tokenInfo, serverMessage{Number: 5701, State: 2, Class: 0,
			Text: fmt.Sprintf("Changed database context to '%s'.", st.db)})
		b = c.appendStmtDone(b, status, 0, 0)
	case stmtSelect:
		if isLegacyTDS(c.tdsVersion) {
			for _, v := range st.vals {
				if v.col.MaxLen == plpMaxLen || v.col.TI != nil && v.col.TI.isPLP() {
					return fmt.Errorf("%w: (max) values need TDS 7.2 or later (this login used TDS %#08x)", errUnsupported, c.tdsVersion)
				}
			}
		}
		cols := make([]column, len(st.vals))
		for i, v := range st.vals {
			cols[i] = v.col
		}
		b = c.appendColMetadata(b, cols)
		if c.fmtOnly {
			b = c.appendStmtDone(b, status, curCmdSelect, 0)
			break
		}
		b = append(b, tokenRow)
		if _, err := c.out.Write(b); err != nil {
			return err
		}
		for _, v := range st.vals {
			if err := c.writeValue(v); err != nil {
				return err
			}
		}
		b = c.appendStmtDone(b[:0], status|doneCount, curCmdSelect, 1)
	case stmtWaitFor:
		attn, err := c.waitFor(st.delay)
		if err != nil {
			return err
		}
		if attn {
			c.logf("attention during WAITFOR: answering DONE with the attention bit")
			if _, err := c.out.Write(c.appendDone(b, doneAttn, 0, 0)); err != nil {
				return err
			}
			return errAttention
		}
		b = c.appendStmtDone(b, status, 0, 0)
	case stmtSeries:
		return c.writeSeries(st.series, status)
	case stmtCreateTable, stmtDropTable, stmtInsertBulk, stmtCount, stmtTableMeta:
		return c.tableStatement(st, status)
	case stmtDataTypeInfo:
		return c.writeDataTypeInfo(st.typeRows, status)
	default:
		return errors.New("tdstest: unknown statement kind")
	}
	_, err := c.out.Write(b)
	return err
}

// writeValue writes one column value of a ROW token, streaming (max) values.
func (c *conn) writeValue(v value) error {
	if v.col.TI != nil {
		c.valBuf = appendValue(c.valBuf[:0], *v.col.TI, v.sv)
		_, err := c.out.Write(c.valBuf)
		return err
	}
	switch v.col.Type {
	case typeInt4:
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(v.i))
		_, err := c.out.Write(b[:])
		return err
	case typeNVarChar, typeBigVarBinary:
		if v.col.MaxLen == plpMaxLen {
			return writePLPRepeat(c.out, v.unit, v.n)
		}
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], uint16(len(v.unit)*int(v.n)))
		if _, err := c.out.Write(b[:]); err != nil {
			return err
		}
		for i := int64(0); i < v.n; i++ {
			if _, err := c.out.Write(v.unit); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("tdstest: no encoder for type 0x%02x", v.col.Type)
}

// shorten cuts a batch for the log.
func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
