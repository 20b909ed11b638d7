package tdstest

import (
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// ntextParam is an unnamed ntext parameter as FreeTDS's ODBC driver sends sp_prepexec's @params
// and @stmt: TEXTTYPE's LONGLEN maximum length, the collation, then a LONGLEN value.
func ntextParam(s string) []byte {
	u := ucs2.Append(nil, s)
	return cat([]byte{0, 0, byte(dtNText)}, le32(uint32(len(u))), serverCollation[:], le32(uint32(len(u))), u)
}

// procMessage builds an RPC request calling ProcID id with the parameter bytes.
func procMessage(id uint16, params ...[]byte) []byte {
	return cat(append([][]byte{le32(22), le32(18), le16(2), le64(0), le32(1), // ALL_HEADERS
		le16(0xFFFF), le16(id), le16(0)}, params...)...) // ProcIDSwitch, ProcID, OptionFlags
}

// intParam is an unnamed int (INTN 4) parameter; status 0x01 makes it an OUTPUT one, null a NULL.
func intParam(status byte, v int32, null bool) []byte {
	if null {
		return []byte{0, status, byte(dtIntN), 4, 0}
	}
	return cat([]byte{0, status, byte(dtIntN), 4, 4}, le32(uint32(v)))
}

// TestPreparedStatements: sp_prepexec runs its statement and returns the handle in a
// RETURNVALUE after RETURNSTATUS; sp_execute runs it again with new values; sp_unprepare forgets
// it, and a later sp_execute gets SQL Server's error 8179. The statement and declarations come
// as ntext, as FreeTDS's ODBC driver sends them.
func TestPreparedStatements(t *testing.T) {
	s, log := startServer(t, Config{})
	c := dialRaw(t, s)
	c.connect(s, 4096)
	hello := []byte{byte(dtNVarChar), 20, 0}
	hello = cat(hello, serverCollation[:], le16(10), ucs2.Append(nil, "hello"))
	prep := procMessage(procIDPrepExec, intParam(rpcParamByRef, 0, true), ntextParam("@P1 INT,@P2 NVARCHAR(10)"),
		ntextParam("SELECT @P1, @P2"), intParam(0, 42, false), cat([]byte{0, 0}, hello))
	resp, err := c.rpc(prep)
	if err != nil {
		t.Fatal(err)
	}
	toks := decodeResult(t, resp, false)
	var kinds []byte
	for _, tk := range toks {
		kinds = append(kinds, tk.typ)
	}
	want := []byte{tokenColMetadata, tokenRow, tokenDoneInProc, tokenReturnStatus, tokenReturnValue, tokenDoneProc}
	if string(kinds) != string(want) {
		t.Fatalf("sp_prepexec tokens % x, want % x", kinds, want)
	}
	if got := toks[1].values; len(got) != 2 || got[0] != int64(42) || got[1] != "hello" {
		t.Errorf("sp_prepexec row %v", got)
	}
	if rv := toks[4]; rv.text != "@handle" || len(rv.values) != 1 || rv.values[0] != int64(1) {
		t.Fatalf("handle RETURNVALUE %+v", rv)
	}
	if d := toks[5]; d.status != doneFinal || d.curCmd != curCmdExecute {
		t.Errorf("DONEPROC %+v", d)
	}

	exec := procMessage(procIDExecute, intParam(0, 1, false), intParam(0, -7, false), cat([]byte{0, 0}, hello))
	resp, err = c.rpc(exec)
	if err != nil {
		t.Fatal(err)
	}
	toks = decodeResult(t, resp, false)
	if len(toks) != 5 || toks[1].typ != tokenRow || toks[1].values[0] != int64(-7) || toks[1].values[1] != "hello" {
		t.Fatalf("sp_execute: %+v", toks)
	}

	resp, err = c.rpc(procMessage(procIDUnprepare, intParam(0, 1, false)))
	if err != nil {
		t.Fatal(err)
	}
	if toks = decodeResult(t, resp, false); len(toks) != 2 || toks[0].typ != tokenReturnStatus || toks[1].status != doneFinal {
		t.Fatalf("sp_unprepare: %+v", toks)
	}
	resp, err = c.rpc(exec)
	if err != nil {
		t.Fatal(err)
	}
	toks = decodeResult(t, resp, false)
	if toks[0].typ != tokenError || toks[0].number != 8179 || !lastDoneFailed(resp) {
		t.Fatalf("sp_execute after sp_unprepare: %+v", toks)
	}
	// A statement that does not compile is not prepared: no handle comes back.
	bad := procMessage(procIDPrepExec, intParam(rpcParamByRef, 0, true), ntextParam(""), ntextParam("SELECT nothing FROM nowhere"))
	resp, err = c.rpc(bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range decodeResult(t, resp, false) {
		if tk.typ == tokenReturnValue {
			t.Errorf("a handle for a statement that does not compile: %+v", tk)
		}
	}
	if !lastDoneFailed(resp) {
		t.Error("the bad statement's DONEPROC lacks the error bit")
	}
	// The handle must be an int OUTPUT parameter.
	resp, err = c.rpc(procMessage(procIDPrepExec, intParam(0, 0, true), ntextParam(""), ntextParam("SELECT 1")))
	if err != nil {
		t.Fatal(err)
	}
	if toks = decodeResult(t, resp, false); toks[0].typ != tokenError || toks[0].number != 214 {
		t.Fatalf("sp_prepexec without OUTPUT handle: %+v", toks)
	}
	if !strings.Contains(log.String(), "sp_execute: prepared statement 1") {
		t.Error("the server log lacks the sp_execute of statement 1")
	}
}
