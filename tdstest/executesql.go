package tdstest

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/tds"
)

// maxRPCValue bounds one (max) parameter; the request as a whole is bounded by maxRequestMessage.
const maxRPCValue = maxRequestMessage

// rpc answers an RPC request: sp_executesql runs its statement with its parameters, and so do
// sp_prepexec and sp_execute (prepared.go); sp_unprepare forgets a prepared statement; other
// procedures get ERROR 50000, and so does a malformed request (read whole, so the connection
// stays usable).
func (c *conn) rpc(payload []byte) error {
	if done, err := c.queryFault(); done {
		return err
	}
	req, err := parseRPC(payload, maxRPCValue)
	if err != nil {
		// The message was read whole, so the stream is intact: answer and stay usable.
		return c.refuse(fmt.Sprintf("tdstest: malformed RPC request: %v", err))
	}
	if err := c.checkTranDesc(req.TranDesc); err != nil {
		return c.refuse(err.Error())
	}
	kind := req.kind()
	if kind == procOther {
		return c.refuse(fmt.Sprintf("tdstest: RPC %s is not supported: tdstest runs sp_executesql, sp_prepexec, sp_execute and sp_unprepare only", req.procLabel()))
	}
	call, perr := c.rpcCall(req, kind)
	if perr == nil {
		if refused, err := c.resultFault(); refused {
			return err
		}
	}
	if err := c.answerRPC(call, perr); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	c.sink.disarm()
	return c.flush()
}

// rpcCall is what an RPC asks to run.
type rpcCall struct {
	text      string // the statement text (empty for sp_unprepare)
	stmts     []statement
	handle    int32 // sp_prepexec: the new handle, returned when hasHandle
	hasHandle bool
}

// rpcCall checks the arguments of the procedure and parses its statement. A statement that does
// not compile is not prepared.
func (c *conn) rpcCall(req *rpcRequest, kind procKind) (call rpcCall, err error) {
	var vars map[string]*rpcParam
	switch kind {
	case procExecuteSQL:
		call.text, vars, err = executeSQLArgs(req)
	case procPrepExec:
		call.text, vars, call.handle, err = c.prepExec(req)
		call.hasHandle = err == nil
	case procExecute:
		call.text, vars, err = c.execute(req)
	case procUnprepare:
		return call, c.unprepare(req)
	}
	if err != nil {
		return call, err
	}
	if call.stmts, err = parseStatements(call.text, vars); err != nil && call.hasHandle {
		delete(c.prepared, call.handle)
		call.hasHandle = false
	}
	return call, err
}

// answerRPC writes the response to an RPC as one message: the statements' tokens inside the
// procedure (DONEINPROC), or the ERROR of a refused call, then the procedure's end. The error
// is a write error.
func (c *conn) answerRPC(call rpcCall, perr error) error {
	c.out.BeginMessage(tds.TypeTabularResult, 0)
	b := c.takeResetAck(c.scratch[:0])
	end := runDone
	if perr != nil {
		end = runFailed
		c.logf("refused sp_executesql %q: %v", shorten(call.text), perr)
		b = c.appendRefusal(b, perr)
	}
	if err := c.emit(b); err != nil {
		return err
	}
	if end == runDone {
		c.inProc = true
		var err error
		end, err = c.runStatements(call.stmts)
		c.inProc = false
		if err != nil {
			return err
		}
	}
	if end != runAttention {
		if err := c.emit(c.appendProcEnd(c.scratch[:0], end, call)); err != nil {
			return err
		}
	}
	return c.out.EndMessage()
}

// appendProcEnd appends what ends a procedure's response: RETURNSTATUS 0 unless it failed,
// sp_prepexec's @handle output parameter (after RETURNSTATUS), and DONEPROC.
func (c *conn) appendProcEnd(b []byte, end runEnd, call rpcCall) []byte {
	status := uint16(doneFinal)
	if end == runFailed {
		status = doneError
	} else {
		b = append(b, tokenReturnStatus, 0, 0, 0, 0)
	}
	if call.hasHandle {
		b = appendReturnValue(b, 0, "@handle", call.handle)
	}
	return c.appendDoneToken(b, tokenDoneProc, status, curCmdExecute, 0)
}

// curCmdExecute is the DONEPROC CurCmd of an EXECUTE.
const curCmdExecute = 0xE0

// executeSQLArgs checks sp_executesql's arguments as SQL Server does: @stmt of a Unicode type,
// @params declaring every further parameter (by name, or by position when unnamed). It returns
// the statement text and the parameters by lower-case name without @; a NULL sent as NULLTYPE
// takes its declared type.
func executeSQLArgs(req *rpcRequest) (string, map[string]*rpcParam, error) {
	if len(req.Params) == 0 {
		return "", nil, &sqlError{Number: 201, State: 4, Class: 16,
			Msg: "Procedure or function 'sp_executesql' expects parameter '@statement', which was not supplied."}
	}
	stmt := req.Params[0]
	if !isUnicodeText(stmt.TI.Type) || stmt.Val.Null {
		return "", nil, &sqlError{Number: 214, State: 2, Class: 16,
			Msg: "Procedure expects parameter '@statement' of type 'ntext/nchar/nvarchar'."}
	}
	text := ucs2.Decode(stmt.Val.Data)
	if len(req.Params) == 1 {
		return text, map[string]*rpcParam{}, nil
	}
	pp := req.Params[1]
	if !isUnicodeText(pp.TI.Type) {
		return "", nil, &sqlError{Number: 214, State: 3, Class: 16,
			Msg: "Procedure expects parameter '@params' of type 'ntext/nchar/nvarchar'."}
	}
	var decls []declParam
	if !pp.Val.Null {
		var err error
		if decls, err = parseParamDecls(ucs2.Decode(pp.Val.Data)); err != nil {
			return "", nil, fmt.Errorf("sp_executesql @params: %w", err)
		}
	}
	vars, err := bindParams(decls, req.Params[2:])
	if err != nil {
		return "", nil, err
	}
	for _, d := range decls {
		if _, ok := vars[strings.ToLower(strings.TrimPrefix(d.Name, "@"))]; !ok {
			return "", nil, &sqlError{Number: 8178, State: 1, Class: 16,
				Msg: fmt.Sprintf("The parameterized query '(%s' expects the parameter '%s', which was not supplied.", shorten(ucs2.Decode(pp.Val.Data)), d.Name)}
		}
	}
	return text, vars, nil
}

// bindParams gives each value of an sp_executesql call (after @stmt and @params) the parameter of
// decls it names, or the one at its position when it is unnamed, as SQL Server does; a NULL sent
// as NULLTYPE takes the declared type. The result is keyed by lower-case name without @.
func bindParams(decls []declParam, params []rpcParam) (map[string]*rpcParam, error) {
	vars := map[string]*rpcParam{}
	byName := map[string]int{}
	for i, d := range decls {
		byName[strings.ToLower(d.Name)] = i
	}
	for i := range params {
		p := &params[i]
		k := i
		if p.Name != "" {
			var ok bool
			if k, ok = byName[strings.ToLower(p.Name)]; !ok {
				return nil, &sqlError{Number: 8145, State: 2, Class: 16,
					Msg: fmt.Sprintf("%s is not a parameter for procedure sp_executesql.", p.Name)}
			}
		} else if k >= len(decls) {
			return nil, &sqlError{Number: 8144, State: 2, Class: 16,
				Msg: "Procedure or function sp_executesql has too many arguments specified."}
		}
		d := decls[k]
		if p.TI.Type == dtNull {
			p.TI = d.TI
		}
		vars[strings.ToLower(strings.TrimPrefix(d.Name, "@"))] = p
	}
	return vars, nil
}

// isUnicodeText reports whether t is a type SQL Server takes for sp_executesql's @stmt and
// @params: ntext, nchar or nvarchar.
func isUnicodeText(t dataType) bool { return t == dtNVarChar || t == dtNChar || t == dtNText }

// checkTranDesc checks the transaction descriptor of a request's ALL_HEADERS against the open
// transaction: 0 (none) is always accepted, and so is any descriptor on a request that resets
// the session (go-mssqldb sends the descriptor of the transaction the reset rolls back).
func (c *conn) checkTranDesc(desc uint64) error {
	if desc == 0 || desc == c.tranID || c.resetRequest {
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], desc)
	if c.tranID == 0 {
		return fmt.Errorf("tdstest: the request carries transaction descriptor %x but no transaction is open", b)
	}
	return fmt.Errorf("tdstest: the request carries transaction descriptor %x, the open transaction is %d", b, c.tranID)
}
