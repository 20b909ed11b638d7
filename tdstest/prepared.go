package tdstest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The procedures an RPC may call by ProcID or name (MS-TDS 2.2.6.6): sp_executesql, and the
// prepared-statement trio ODBC drivers (FreeTDS among them) use for parameterized queries:
// sp_prepexec prepares and runs a statement and returns its handle, sp_execute runs a prepared
// statement again with new values, sp_unprepare forgets it.
type procKind uint8

const (
	procOther procKind = iota
	procExecuteSQL
	procPrepExec
	procExecute
	procUnprepare
)

// ProcIDs of the prepared-statement procedures.
const (
	procIDExecute   = 12
	procIDPrepExec  = 13
	procIDUnprepare = 15
)

// maxPrepared bounds the prepared statements one connection keeps.
const maxPrepared = 4096

// kind tells which procedure the request calls.
func (r *rpcRequest) kind() procKind {
	if r.isExecuteSQL() {
		return procExecuteSQL
	}
	byID := map[uint16]procKind{procIDPrepExec: procPrepExec, procIDExecute: procExecute, procIDUnprepare: procUnprepare}
	if r.ProcName == "" {
		return byID[r.ProcID]
	}
	n := strings.ToLower(strings.NewReplacer("[", "", "]", "").Replace(r.ProcName))
	n = strings.TrimPrefix(n, "sys.")
	return map[string]procKind{"sp_prepexec": procPrepExec, "sp_execute": procExecute, "sp_unprepare": procUnprepare}[n]
}

// preparedStmt is what sp_prepexec keeps for sp_execute: the @params and @stmt arguments.
type preparedStmt struct {
	params, stmt rpcParam
}

// handleArg reads the int handle argument of sp_execute and sp_unprepare (the first parameter).
func handleArg(req *rpcRequest, proc string) (int32, error) {
	if len(req.Params) == 0 {
		return 0, &sqlError{Number: 201, State: 4, Class: 16,
			Msg: fmt.Sprintf("Procedure or function '%s' expects parameter '@handle', which was not supplied.", proc)}
	}
	h := req.Params[0]
	if h.TI.nullable().Type != dtIntN || h.TI.Size != 4 || h.Val.Null {
		return 0, &sqlError{Number: 8179, State: 2, Class: 16,
			Msg: fmt.Sprintf("Could not find prepared statement with handle %s.", h.TI.decl())}
	}
	return int32(leInt(h.Val.Data)), nil
}

// prepExec checks sp_prepexec's arguments (@handle OUTPUT, @params, @stmt, values ...) as
// executeSQLArgs checks sp_executesql's, and prepares the statement under a new handle.
func (c *conn) prepExec(req *rpcRequest) (text string, vars map[string]*rpcParam, handle int32, err error) {
	if len(req.Params) < 3 {
		return "", nil, 0, &sqlError{Number: 201, State: 4, Class: 16,
			Msg: "Procedure or function 'sp_prepexec' expects parameter '@stmt', which was not supplied."}
	}
	if h := req.Params[0]; h.Status&rpcParamByRef == 0 || h.TI.nullable().Type != dtIntN || h.TI.Size != 4 {
		return "", nil, 0, &sqlError{Number: 214, State: 1, Class: 16,
			Msg: "Procedure expects parameter '@handle' of type 'int' passed as OUTPUT."}
	}
	if len(c.prepared) >= maxPrepared {
		return "", nil, 0, fmt.Errorf("%w: more than %d prepared statements on one connection", errUnsupported, maxPrepared)
	}
	p := preparedStmt{params: req.Params[1], stmt: req.Params[2]}
	text, vars, err = executeSQLArgs(p.request(req.Params[3:]))
	if err != nil {
		return "", nil, 0, err
	}
	c.lastHandle++
	if c.prepared == nil {
		c.prepared = map[int32]preparedStmt{}
	}
	c.prepared[c.lastHandle] = p
	c.logf("sp_prepexec: prepared statement %d", c.lastHandle)
	return text, vars, c.lastHandle, nil
}

// execute checks sp_execute's arguments (@handle, values ...) against the prepared statement.
func (c *conn) execute(req *rpcRequest) (string, map[string]*rpcParam, error) {
	h, err := handleArg(req, "sp_execute")
	if err != nil {
		return "", nil, err
	}
	p, ok := c.prepared[h]
	if !ok {
		return "", nil, &sqlError{Number: 8179, State: 2, Class: 16, Msg: fmt.Sprintf("Could not find prepared statement with handle %d.", h)}
	}
	c.logf("sp_execute: prepared statement %d", h)
	return executeSQLArgs(p.request(req.Params[1:]))
}

// unprepare forgets the statement sp_unprepare names.
func (c *conn) unprepare(req *rpcRequest) error {
	h, err := handleArg(req, "sp_unprepare")
	if err != nil {
		return err
	}
	if _, ok := c.prepared[h]; !ok {
		return &sqlError{Number: 8179, State: 2, Class: 16, Msg: fmt.Sprintf("Could not find prepared statement with handle %d.", h)}
	}
	delete(c.prepared, h)
	return nil
}

// request is the sp_executesql call equivalent to running p with values.
func (p preparedStmt) request(values []rpcParam) *rpcRequest {
	params := make([]rpcParam, 0, 2+len(values))
	params = append(params, p.stmt, p.params)
	return &rpcRequest{ProcID: procIDExecuteSQL, Params: append(params, values...)}
}

// appendReturnValue appends the RETURNVALUE token (MS-TDS 2.2.7.18) of an int OUTPUT parameter:
// ordinal, name, status 0x01 (output parameter), UserType, Flags, TYPE_INFO INTN(4), value.
func appendReturnValue(dst []byte, ordinal uint16, name string, v int32) []byte {
	dst = append(dst, tokenReturnValue)
	dst = binary.LittleEndian.AppendUint16(dst, ordinal)
	dst = appendBVarChar(dst, name)
	dst = append(dst, 0x01)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // UserType (TDS 7.2+: RPC needs 7.2)
	dst = binary.LittleEndian.AppendUint16(dst, colFlagNullable)
	dst = append(dst, byte(dtIntN), 4, 4)
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}
