package tdstest

import (
	"encoding/binary"
	"fmt"
	"strings"

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
	var (
		text      string
		vars      map[string]*rpcParam
		perr      error
		handle    int32
		hasHandle bool
	)
	switch kind {
	case procExecuteSQL:
		text, vars, perr = executeSQLArgs(req)
	case procPrepExec:
		text, vars, handle, perr = c.prepExec(req)
		hasHandle = perr == nil
	case procExecute:
		text, vars, perr = c.execute(req)
	case procUnprepare:
		perr = c.unprepare(req)
	}
	var stmts []statement
	if perr == nil && kind != procUnprepare {
		stmts, perr = parseStatements(text, c.sessionInfo(), vars)
		if perr != nil && hasHandle {
			// A statement that does not compile is not prepared.
			delete(c.prepared, handle)
			hasHandle = false
		}
	}
	if perr == nil {
		if refused, err := c.resultFault(); refused {
			return err
		}
	}
	c.out.BeginMessage(tds.TypeTabularResult, 0)
	b := c.takeResetAck(c.scratch[:0])
	end := runDone
	if perr != nil {
		end = runFailed
		c.logf("refused sp_executesql %q: %v", shorten(text), perr)
		b = c.appendErrorFor(b, perr)
	}
	if _, err := c.out.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if end == runDone {
		c.inProc = true
		end, err = c.runStatements(stmts)
		c.inProc = false
		if err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	if end != runAttention {
		b = c.scratch[:0]
		status := uint16(doneFinal)
		if end == runFailed {
			status = doneError
		} else {
			b = append(b, tokenReturnStatus, 0, 0, 0, 0)
		}
		if hasHandle {
			// Output parameters follow RETURNSTATUS, before DONEPROC.
			b = appendReturnValue(b, 0, "@handle", handle)
		}
		b = c.appendDoneToken(b, tokenDoneProc, status, curCmdExecute, 0)
		c.scratch = b[:0]
		if _, err := c.out.Write(b); err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	if err := c.out.EndMessage(); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	c.sink.disarm()
	return c.flush()
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
	text := decodeUCS2(stmt.Val.Data)
	vars := map[string]*rpcParam{}
	if len(req.Params) == 1 {
		return text, vars, nil
	}
	pp := req.Params[1]
	if !isUnicodeText(pp.TI.Type) {
		return "", nil, &sqlError{Number: 214, State: 3, Class: 16,
			Msg: "Procedure expects parameter '@params' of type 'ntext/nchar/nvarchar'."}
	}
	var decls []declParam
	if !pp.Val.Null {
		var err error
		if decls, err = parseParamDecls(decodeUCS2(pp.Val.Data)); err != nil {
			return "", nil, fmt.Errorf("sp_executesql @params: %w", err)
		}
	}
	byName := map[string]int{}
	for i, d := range decls {
		byName[strings.ToLower(d.Name)] = i
	}
	for i := range req.Params[2:] {
		p := &req.Params[2+i]
		k := i
		if p.Name != "" {
			var ok bool
			if k, ok = byName[strings.ToLower(p.Name)]; !ok {
				return "", nil, &sqlError{Number: 8145, State: 2, Class: 16,
					Msg: fmt.Sprintf("%s is not a parameter for procedure sp_executesql.", p.Name)}
			}
		} else if k >= len(decls) {
			return "", nil, &sqlError{Number: 8144, State: 2, Class: 16,
				Msg: "Procedure or function sp_executesql has too many arguments specified."}
		}
		d := decls[k]
		if p.TI.Type == dtNull {
			p.TI = d.TI
		}
		vars[strings.ToLower(strings.TrimPrefix(d.Name, "@"))] = p
	}
	for _, d := range decls {
		if _, ok := vars[strings.ToLower(strings.TrimPrefix(d.Name, "@"))]; !ok {
			return "", nil, &sqlError{Number: 8178, State: 1, Class: 16,
				Msg: fmt.Sprintf("The parameterized query '(%s' expects the parameter '%s', which was not supplied.", shorten(decodeUCS2(pp.Val.Data)), d.Name)}
		}
	}
	return text, vars, nil
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
