package tdstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// RPC request layout (MS-TDS 2.2.6.6): ALL_HEADERS, then NameLenProcID (US_VARCHAR name, or
// 0xFFFF and a u16 ProcID), OptionFlags u16, then parameters: B_VARCHAR name, StatusFlags u8,
// TYPE_INFO, value.
const (
	procIDSwitch      = 0xFFFF
	procIDExecuteSQL  = 10 // sp_executesql
	rpcParamByRef     = 0x01
	rpcParamDefault   = 0x02
	rpcParamEncrypted = 0x08
	rpcBatchFlag      = 0x80 // TDS 7.1 separator of RPCs in one request
	rpcNoExecFlag     = 0xFF // TDS 7.2+ separator
	maxRPCParams      = 2100 // SQL Server's limit of parameters per request
)

// Header types of ALL_HEADERS (MS-TDS 2.2.5.3).
const allHeaderTransaction = 2

// rpcParam is one decoded RPC parameter. Its value is an owned copy.
type rpcParam struct {
	Name   string // as sent, "@p1"; may be empty (positional)
	Status uint8
	TI     typeInfo
	Val    sqlValue
}

// rpcRequest is a decoded RPC request.
type rpcRequest struct {
	TranDesc uint64 // transaction descriptor from ALL_HEADERS (0: none)
	ProcID   uint16 // with ProcName == ""
	ProcName string
	Flags    uint16
	Params   []rpcParam
}

// procLabel names the procedure for messages.
func (r *rpcRequest) procLabel() string {
	if r.ProcName != "" {
		return r.ProcName
	}
	return fmt.Sprintf("ProcID %d", r.ProcID)
}

// isExecuteSQL reports whether the request calls sp_executesql (by ProcID or by name).
func (r *rpcRequest) isExecuteSQL() bool {
	if r.ProcName == "" {
		return r.ProcID == procIDExecuteSQL
	}
	n := strings.ToLower(strings.NewReplacer("[", "", "]", "").Replace(r.ProcName))
	return n == "sp_executesql" || n == "sys.sp_executesql"
}

// parseRPC decodes an RPC request payload; maxValue bounds each (max) parameter. Errors name the
// parameter and the offset in the payload.
func parseRPC(payload []byte, maxValue int64) (*rpcRequest, error) {
	rest, tran, err := allHeaders(payload)
	if err != nil {
		return nil, fmt.Errorf("RPC: %w", err)
	}
	base := int64(len(payload) - len(rest))
	w := newWireReader(bytes.NewReader(rest))
	w.off = base
	req := &rpcRequest{TranDesc: tran}
	n, err := w.uint16()
	if err != nil {
		return nil, fmt.Errorf("RPC: procedure name: %w", err)
	}
	if n == procIDSwitch {
		if req.ProcID, err = w.uint16(); err != nil {
			return nil, fmt.Errorf("RPC: ProcID: %w", err)
		}
	} else {
		if n == 0 || n > 1024 {
			return nil, fmt.Errorf("RPC: procedure name of %d characters at offset %d", n, base)
		}
		b, err := w.bytes(2 * int(n))
		if err != nil {
			return nil, fmt.Errorf("RPC: procedure name: %w", err)
		}
		req.ProcName = ucs2.Decode(b)
	}
	if req.Flags, err = w.uint16(); err != nil {
		return nil, fmt.Errorf("RPC: OptionFlags: %w", err)
	}
	for !w.atEOF() {
		if w.err != nil {
			return nil, fmt.Errorf("RPC: %w", w.err)
		}
		at := w.off
		nameLen, err := w.byte()
		if err != nil {
			return nil, fmt.Errorf("RPC: parameter %d: %w", len(req.Params)+1, err)
		}
		if nameLen == rpcBatchFlag || nameLen == rpcNoExecFlag {
			return nil, fmt.Errorf("RPC: a second procedure call at offset %d: tdstest answers one RPC per request", at)
		}
		if len(req.Params) == maxRPCParams {
			return nil, fmt.Errorf("RPC: more than %d parameters", maxRPCParams)
		}
		nb, err := w.bytes(2 * int(nameLen))
		if err != nil {
			return nil, fmt.Errorf("RPC: parameter %d name: %w", len(req.Params)+1, err)
		}
		p := rpcParam{Name: ucs2.Decode(nb)}
		label := fmt.Sprintf("parameter %d (%q, offset %d)", len(req.Params)+1, p.Name, at)
		if p.Status, err = w.byte(); err != nil {
			return nil, fmt.Errorf("RPC: %s: status: %w", label, err)
		}
		if p.Status&rpcParamEncrypted != 0 {
			return nil, fmt.Errorf("RPC: %s: encrypted parameters (Always Encrypted) are not supported", label)
		}
		if p.Status&^(rpcParamByRef|rpcParamDefault) != 0 {
			return nil, fmt.Errorf("RPC: %s: unknown status flags 0x%02X", label, p.Status)
		}
		if p.TI, err = readTypeInfo(w); err != nil {
			return nil, fmt.Errorf("RPC: %s: %w", label, err)
		}
		if p.Val, err = readValue(w, p.TI, true, maxValue); err != nil {
			return nil, fmt.Errorf("RPC: %s: %w", label, err)
		}
		req.Params = append(req.Params, p)
	}
	return req, nil
}

// allHeaders checks the ALL_HEADERS block (TDS 7.2+) that starts a SQL batch, RPC or transaction
// manager request and returns what follows it and the transaction descriptor, if any.
func allHeaders(p []byte) (rest []byte, tranDesc uint64, err error) {
	if len(p) < 4 {
		return nil, 0, fmt.Errorf("request of %d bytes has no ALL_HEADERS", len(p))
	}
	total := binary.LittleEndian.Uint32(p)
	if total < 4 || uint64(total) > uint64(len(p)) {
		return nil, 0, fmt.Errorf("ALL_HEADERS TotalLength %d, payload has %d bytes", total, len(p))
	}
	for h := p[4:total]; len(h) > 0; {
		if len(h) < 6 {
			return nil, 0, fmt.Errorf("truncated header in ALL_HEADERS (%d bytes left)", len(h))
		}
		n := binary.LittleEndian.Uint32(h)
		if n < 6 || uint64(n) > uint64(len(h)) {
			return nil, 0, fmt.Errorf("header length %d in ALL_HEADERS with %d bytes left", n, len(h))
		}
		if binary.LittleEndian.Uint16(h[4:]) == allHeaderTransaction {
			// TransactionDescriptor u64, OutstandingRequestCount u32
			if n != 18 {
				return nil, 0, fmt.Errorf("transaction descriptor header of %d bytes, want 18", n)
			}
			tranDesc = binary.LittleEndian.Uint64(h[6:])
		}
		h = h[n:]
	}
	return p[total:], tranDesc, nil
}
