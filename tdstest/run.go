package tdstest

import (
	"errors"
	"fmt"
)

// A request's statements run one after the other against the live session (session.go): each
// run function reads the session as the statements before it left it and changes it before the
// next one runs. Each also sets @@ROWCOUNT (session.rowCount) as SQL Server's documentation of
// @@ROWCOUNT says for its kind: a SELECT sets the rows it returned (1 for a list of values), an
// EXECUTE keeps the count of the procedure's last statement, and USE, SET, BEGIN TRAN and COMMIT
// reset it to 0; the kinds the documentation does not name (ROLLBACK, WAITFOR, CREATE and DROP
// TABLE, INSERT BULK, which affect no row) reset it to 0 as well. A statement that succeeds
// leaves @@ERROR 0; one that fails sets it to its error's number and @@ROWCOUNT to 0.

// runFunc runs one statement and writes its tokens, ending with a DONE (DONEINPROC inside an RPC)
// of the given status. A *sqlError or an errUnsupported is the statement's failure, which the
// caller reports; errAttention means an ATTENTION ended it; any other error is a write error.
type runFunc func(c *conn, st *statement, status uint16) error

// stmtRunners is the run function of each statement kind.
var stmtRunners = [...]runFunc{
	stmtSet:          (*conn).runSet,
	stmtUse:          (*conn).runUse,
	stmtSelect:       (*conn).runSelect,
	stmtTran:         (*conn).runTran,
	stmtWaitFor:      (*conn).runWaitFor,
	stmtSeries:       (*conn).runSeries,
	stmtCreateTable:  (*conn).runCreateTable,
	stmtDropTable:    (*conn).runDropTable,
	stmtInsertBulk:   (*conn).runInsertBulk,
	stmtCount:        (*conn).runCount,
	stmtTableMeta:    (*conn).runTableMeta,
	stmtDataTypeInfo: (*conn).runDataTypeInfo,
}

// runEnd is how a run of statements ended.
type runEnd uint8

const (
	runDone      runEnd = iota // every statement ran
	runFailed                  // a statement failed; its ERROR and a DONE with the error bit were written
	runAttention               // an ATTENTION arrived; the DONE with the attention bit ended the response
)

var runEndNames = [...]string{runDone: "done", runFailed: "failed", runAttention: "attention"}

func (e runEnd) String() string {
	if int(e) < len(runEndNames) {
		return runEndNames[e]
	}
	return fmt.Sprintf("runEnd(%d)", uint8(e))
}

// runStatements runs the statements in order. In a batch the last DONE is final; inside an RPC
// (c.inProc) every statement ends with DONEINPROC and the caller writes DONEPROC unless the run
// ended with an attention. A statement that fails ends the request, as SQL Server aborts a
// batch. The error is a write error.
func (c *conn) runStatements(stmts []statement) (runEnd, error) {
	for i := range stmts {
		status := uint16(doneFinal)
		if i < len(stmts)-1 || c.inProc {
			status = doneMore
		}
		err := c.run(&stmts[i], status)
		var se *sqlError
		switch {
		case err == nil:
		case errors.Is(err, errAttention):
			return runAttention, nil
		case errors.As(err, &se) || errors.Is(err, errUnsupported):
			return runFailed, c.statementFailed(err)
		default:
			return runDone, err
		}
	}
	return runDone, nil
}

// run runs one statement with the run function of its kind.
func (c *conn) run(st *statement, status uint16) error {
	if int(st.kind) >= len(stmtRunners) || stmtRunners[st.kind] == nil {
		return fmt.Errorf("%w: no run function for statement kind %v", errUnsupported, st.kind)
	}
	if err := stmtRunners[st.kind](c, st, status); err != nil {
		return err
	}
	c.lastError = 0
	return nil
}

// statementFailed writes the ERROR of a failed statement and the DONE that ends the request: a
// batch's last DONE is final; inside an RPC, DONEPROC follows.
func (c *conn) statementFailed(err error) error {
	c.logf("statement failed: %v", err)
	msg := errorMessage(err)
	c.lastError, c.rowCount = msg.Number, 0
	b := c.appendMessage(c.scratch[:0], tokenError, msg)
	end := uint16(doneError)
	if c.inProc {
		end |= doneMore
	}
	return c.emit(c.appendStmtDone(b, end, 0, 0))
}

// emit writes b, a statement's tokens built in c.scratch, and keeps the buffer for the next one.
func (c *conn) emit(b []byte) error {
	c.scratch = b[:0]
	_, err := c.out.Write(b)
	return err
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

// runSet applies SET NOCOUNT or FMTONLY; other options change nothing.
func (c *conn) runSet(st *statement, status uint16) error {
	switch st.option {
	case "NOCOUNT":
		c.nocount = st.on
	case "FMTONLY":
		c.fmtOnly = st.on
	}
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.scratch[:0], status, curCmdSet, 0))
}

// runUse makes st.db the current database: ENVCHANGE, then INFO 5701, as SQL Server answers.
func (c *conn) runUse(st *statement, status uint16) error {
	old := c.database
	c.database, c.rowCount = st.db, 0
	b := appendEnvChangeString(c.scratch[:0], envDatabase, st.db, old)
	b = c.appendMessage(b, tokenInfo, serverMessage{Number: 5701, State: 2, Class: 0,
		Text: fmt.Sprintf("Changed database context to '%s'.", st.db)})
	return c.emit(c.appendStmtDone(b, status, 0, 0))
}

// runTran runs BEGIN TRAN, COMMIT or ROLLBACK (transaction.go).
func (c *conn) runTran(st *statement, status uint16) error {
	b := c.scratch[:0]
	if st.begin {
		b = c.beginTran(b)
	} else {
		b = c.endTran(b, st.commit)
	}
	c.rowCount = 0
	return c.emit(c.appendStmtDone(b, status, 0, 0))
}

// runWaitFor waits for st.delay, or until an ATTENTION, which ends the request at once.
func (c *conn) runWaitFor(st *statement, status uint16) error {
	attn, err := c.waitFor(st.delay)
	if err != nil {
		return err
	}
	if attn {
		c.logf("attention during WAITFOR: answering DONE with the attention bit")
		if err := c.emit(c.appendDone(c.scratch[:0], doneAttn, 0, 0)); err != nil {
			return err
		}
		return errAttention
	}
	c.rowCount = 0
	return c.emit(c.appendStmtDone(c.scratch[:0], status, 0, 0))
}
