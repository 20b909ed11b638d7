package tdstest

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
	"github.com/tdsbridge/tdsbridge/tds"
)

// rpcParamBytes is one hand-encoded RPC parameter: its declaration in @params, its TYPE_INFO
// and value exactly as a client puts them on the wire.
type rpcParamBytes struct {
	decl     string
	typeInfo []byte
	value    []byte
}

// le16 and friends keep the fixtures readable.
func le16(v uint16) []byte       { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte       { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte       { return binary.LittleEndian.AppendUint64(nil, v) }
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// nvarcharParam encodes a non-NULL nvarchar(n) parameter value (TYPE_INFO and value).
func nvarcharParam(s string, n int) ([]byte, []byte) {
	u := ucs2.Append(nil, s)
	return cat([]byte{0xE7}, le16(uint16(2*n)), serverCollation[:]), cat(le16(uint16(len(u))), u)
}

// executeSQLMessage builds an RPC request calling sp_executesql (by ProcID 10, or by name) with
// the statement, the @params declarations and the parameters @p1, @p2, ...
func executeSQLMessage(stmt string, byName bool, tranDesc uint64, params []rpcParamBytes) []byte {
	return executeSQLMessageNames(stmt, byName, tranDesc, params, true)
}

// executeSQLMessageNames is executeSQLMessage with the parameters named in the request (@p1,
// ...) or, without named, sent positionally with empty names.
func executeSQLMessageNames(stmt string, byName bool, tranDesc uint64, params []rpcParamBytes, named bool) []byte {
	b := cat(le32(22), le32(18), le16(2), le64(tranDesc), le32(1)) // ALL_HEADERS
	if byName {
		name := ucs2.Append(nil, "sp_executesql")
		b = cat(b, le16(uint16(len(name)/2)), name)
	} else {
		b = cat(b, le16(0xFFFF), le16(procIDExecuteSQL)) // ProcIDSwitch, ProcID
	}
	b = append(b, 0, 0) // OptionFlags
	var decls []string
	for i, p := range params {
		if p.decl != "" { // an empty decl sends a value that @params does not declare
			decls = append(decls, "@p"+strconv.Itoa(i+1)+" "+p.decl)
		}
	}
	ti, v := nvarcharParam(stmt, 4000)
	b = cat(b, []byte{0}, []byte{0}, ti, v) // unnamed @stmt, status 0
	ti, v = nvarcharParam(strings.Join(decls, ","), 4000)
	b = cat(b, []byte{0}, []byte{0}, ti, v) // unnamed @params
	for i, p := range params {
		name := ucs2.Append(nil, "@p"+strconv.Itoa(i+1))
		if !named {
			name = nil
		}
		b = cat(b, []byte{byte(len(name) / 2)}, name, []byte{0}, p.typeInfo, p.value)
	}
	return b
}

// rpc sends an RPC request and returns the response payload.
func (c *rawClient) rpc(payload []byte) ([]byte, error) {
	if err := c.w.WriteMessage(tds.TypeRPC, payload); err != nil {
		return nil, err
	}
	_, resp, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), resp...), nil
}

// echoParams are parameters of every type of the statement contract, non-NULL and NULL, with
// the TYPE_INFO and value bytes a client sends.
var echoParams = []rpcParamBytes{
	{"bit", []byte{0x68, 1}, []byte{1, 1}},
	{"tinyint", []byte{0x26, 1}, []byte{1, 200}},
	{"smallint", []byte{0x26, 2}, cat([]byte{2}, le16(0x8001))},
	{"int", []byte{0x26, 4}, cat([]byte{4}, le32(0xFFFFFFFE))},
	{"bigint", []byte{0x26, 8}, cat([]byte{8}, le64(1<<62))},
	{"decimal(18,4)", []byte{0x6A, 9, 18, 4}, cat([]byte{9, 0}, le64(12345678))}, // -1234.5678
	{"numeric(38,10)", []byte{0x6C, 17, 38, 10}, cat([]byte{17, 1}, le64(1), le64(1))},
	{"real", []byte{0x6D, 4}, cat([]byte{4}, le32(0x3FC00000))}, // 1.5
	{"float", []byte{0x6D, 8}, cat([]byte{8}, le64(0x400921FB54442D18))},
	{"nvarchar(10)", cat([]byte{0xE7}, le16(20), serverCollation[:]), cat(le16(6), ucs2.Append(nil, "héé"))},
	{"varchar(5)", cat([]byte{0xA7}, le16(5), serverCollation[:]), cat(le16(3), []byte("abc"))},
	{"nvarchar(max)", cat([]byte{0xE7}, le16(0xFFFF), serverCollation[:]), cat(le64(4), le32(4), ucs2.Append(nil, "xy"), le32(0))},
	{"varchar(max)", cat([]byte{0xA7}, le16(0xFFFF), serverCollation[:]), cat(le64(0), le32(0))},
	{"varbinary(8)", cat([]byte{0xA5}, le16(8)), cat(le16(3), []byte{0, 0xFF, 7})},
	{"varbinary(max)", cat([]byte{0xA5}, le16(0xFFFF)), cat(le64(2), le32(2), []byte{9, 8}, le32(0))},
	{"datetime2(7)", []byte{0x2A, 7}, []byte{8, 1, 2, 3, 4, 5, 0x10, 0x20, 0x0B}},
	{"datetimeoffset(7)", []byte{0x2B, 7}, cat([]byte{10, 1, 2, 3, 4, 5, 0x10, 0x20, 0x0B}, le16(60))},
	{"date", []byte{0x28}, []byte{3, 0x10, 0x20, 0x0B}},
	{"time(3)", []byte{0x29, 3}, cat([]byte{4}, le32(86399999))},
	{"uniqueidentifier", []byte{0x24, 16}, cat([]byte{16}, bytes.Repeat([]byte{0xAB}, 16))},
	// NULL of each kind of length prefix.
	{"bit", []byte{0x68, 1}, []byte{0}},
	{"bigint", []byte{0x26, 8}, []byte{0}},
	{"decimal(18,4)", []byte{0x6A, 9, 18, 4}, []byte{0}},
	{"float", []byte{0x6D, 8}, []byte{0}},
	{"nvarchar(10)", cat([]byte{0xE7}, le16(20), serverCollation[:]), le16(0xFFFF)},
	{"varbinary(8)", cat([]byte{0xA5}, le16(8)), le16(0xFFFF)},
	{"nvarchar(max)", cat([]byte{0xE7}, le16(0xFFFF), serverCollation[:]), le64(plpNull)},
	{"varbinary(max)", cat([]byte{0xA5}, le16(0xFFFF)), le64(plpNull)},
	{"datetime2(7)", []byte{0x2A, 7}, []byte{0}},
	{"datetimeoffset(7)", []byte{0x2B, 7}, []byte{0}},
	{"date", []byte{0x28}, []byte{0}},
	{"time(7)", []byte{0x29, 7}, []byte{0}},
	{"uniqueidentifier", []byte{0x24, 16}, []byte{0}},
}

// TestRPCEchoBytes: SELECT @p1, ..., @pN over sp_executesql returns COLMETADATA with each
// parameter's TYPE_INFO byte for byte (nullable, no name) and one ROW with each value's bytes.
func TestRPCEchoBytes(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	var sel []string
	for i := range echoParams {
		sel = append(sel, "@p"+strconv.Itoa(i+1))
	}
	for _, byName := range []bool{false, true} {
		resp, err := c.rpc(executeSQLMessage("SELECT "+strings.Join(sel, ", "), byName, 0, echoParams))
		if err != nil {
			t.Fatal(err)
		}
		want := cat([]byte{tokenColMetadata}, le16(uint16(len(echoParams))))
		for _, p := range echoParams {
			want = cat(want, le32(0), le16(colFlagNullable), p.typeInfo, []byte{0})
		}
		want = append(want, tokenRow)
		for _, p := range echoParams {
			want = append(want, p.value...)
		}
		want = cat(want, []byte{tokenDoneInProc}, le16(doneMore|doneCount), le16(curCmdSelect), le64(1),
			[]byte{tokenReturnStatus}, le32(0), []byte{tokenDoneProc}, le16(0), le16(curCmdExecute), le64(0))
		if !bytes.Equal(resp, want) {
			t.Fatalf("by name %v: response\n%x\nwant\n%x", byName, resp, want)
		}
	}
}

// TestRPCTransactionDescriptor: an RPC carrying the descriptor of the open transaction runs; one
// naming no open transaction is refused with a clear error and the connection stays usable.
func TestRPCTransactionDescriptor(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	one := []rpcParamBytes{{"bigint", []byte{0x26, 8}, cat([]byte{8}, le64(1))}}
	resp, err := c.rpc(executeSQLMessage("SELECT @p1", false, 99, one))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(resp, ucs2.Append(nil, "no transaction is open")) || !lastDoneFailed(resp) {
		t.Fatalf("stale descriptor: %x", resp)
	}
	resp, err = c.query("BEGIN TRAN")
	if err != nil {
		t.Fatal(err)
	}
	begin, ok := findToken(resp, tokenEnvChange)
	if !ok || begin.env != envBeginTran || len(begin.raw) != 10 || begin.raw[0] != 8 {
		t.Fatalf("BEGIN TRAN: %x", resp)
	}
	desc := binary.LittleEndian.Uint64(begin.raw[1:9])
	for _, tc := range []struct {
		desc uint64
		ok   bool
	}{{desc, true}, {0, true}, {desc + 1, false}} {
		resp, err := c.rpc(executeSQLMessage("SELECT @p1, @@TRANCOUNT", false, tc.desc, one))
		if err != nil {
			t.Fatal(err)
		}
		if failed := lastDoneFailed(resp); failed == tc.ok {
			t.Fatalf("descriptor %d (open %d): error %v, response %x", tc.desc, desc, failed, resp)
		}
	}
}

// lastDoneFailed reports whether a response ends with a DONE or DONEPROC with the error bit.
func lastDoneFailed(resp []byte) bool {
	if len(resp) < 13 {
		return true
	}
	d := resp[len(resp)-13:]
	return d[0] != tokenDone && d[0] != tokenDoneProc || binary.LittleEndian.Uint16(d[1:])&doneError != 0
}

// TestRPCPositionalParams: parameters sent without names take the names of @params in order.
func TestRPCPositionalParams(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	params := echoParams[:5]
	resp, err := c.rpc(executeSQLMessageNames("SELECT @p5, @p1", false, 0, params, false))
	if err != nil {
		t.Fatal(err)
	}
	want := cat([]byte{tokenRow}, params[4].value, params[0].value, []byte{tokenDoneInProc})
	if !bytes.Contains(resp, want) || lastDoneFailed(resp) {
		t.Fatalf("response %x lacks %x", resp, want)
	}
	// More values than declarations: SQL Server's error 8144.
	undeclared := params[0]
	undeclared.decl = ""
	resp, err = c.rpc(executeSQLMessageNames("SELECT 1", false, 0, append(params[:1:1], undeclared), false))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(resp, ucs2.Append(nil, "too many arguments")) || !lastDoneFailed(resp) {
		t.Fatalf("too many arguments: %x", resp)
	}
}
