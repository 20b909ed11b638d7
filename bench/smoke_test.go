package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
	"github.com/tdsbridge/tdsbridge/internal/report/reporttest"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestSmoke runs the whole program in a tiny configuration: one round, a 2 KiB value, a short
// budget; servers in child processes (this test binary re-executed in child mode). It checks
// that every section of the table is printed and that the JSON and SVG files are written.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes and measures for a few seconds")
	}
	svgPath := filepath.Join(t.TempDir(), "r.svg")
	out, errOut, rep := runWithJSON(t, "-rounds", "1", "-size", "2048", "-rows", "100", "-idle-conns", "3", "-idle-rounds", "1", "-duration", "2s", "-dsn", "", "-plot", svgPath)
	for _, want := range []string{
		"== Driver: one SELECT of a 2 KiB value per query",
		"nvarchar/4096", "varbinary/16384", "varbinary/4096, 16 KiB records", "fresh process varbinary/16384",
		"round trip SELECT @p1, @p2", "round trip SET NOCOUNT ON", "narrow rows x100", "wide rows x100",
		"upload 2 KiB varbinary(max) parameter", "CopyIn x100 rows",
		report.ArmNativeTLS, report.ArmBridgedTLS, report.ArmNativePlain, report.ArmBridgedPlain,
		"== Driver summary", "== Targets:", "== Driver workloads", "== Idle",
		"== Transport only", "16 KiB records, TDS header+body",
		"== Floor", "loopback TCP read",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "round 1/1") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	// 4 value cells + 6 workload cells + 3 sweep cells + 2 fresh-process cells, 6 transport
	// cells, 4 floor cells; one sample per arm; the idle figure for the four driver arms.
	if len(rep.Cells) != 25 {
		t.Errorf("%d cells in JSON, want 25", len(rep.Cells))
	}
	if len(rep.Idle) != 4 || rep.Idle[0].Summary.N != 1 {
		t.Errorf("idle figures = %+v, want four arms with one round each", rep.Idle)
	}
	for _, c := range rep.Cells {
		for _, a := range c.Arms {
			if len(a.Samples) != 1 || a.Samples[0].Ops < 1 || a.Samples[0].Bytes < 1 {
				t.Errorf("%s %s: samples %+v, want one with ops and bytes", c.Name, a.Name, a.Samples)
			}
		}
	}
	if svg, err := os.ReadFile(svgPath); err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("SVG file: %v, starts %.20q", err, svg)
	}
}

// runWithJSON runs the program with args and -json, fails the test unless it exits 0, and
// returns what it printed on stdout and stderr and the report it wrote.
func runWithJSON(t *testing.T, args ...string) (stdout, stderr string, rep report.Report) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	args = append(args, "-json", jsonPath)
	var out, errOut bytes.Buffer
	if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("run(%q) = %d\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errOut.String())
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return out.String(), errOut.String(), rep
}

func TestParseFlags(t *testing.T) {
	env := func(k string) string {
		if k == "MSSQL_DSN" {
			return "sqlserver://u:p@db:1433"
		}
		return ""
	}
	var stderr bytes.Buffer
	c, err := parseFlags(nil, &stderr, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.dsn != "sqlserver://u:p@db:1433" || c.mode != modeAll || c.rounds != 20 || c.size != 1<<20 {
		t.Errorf("defaults = %+v", c)
	}
	for _, bad := range [][]string{
		{"-mode", "x"}, {"-rounds", "0"}, {"-size", "3"}, {"-duration", "0s"},
		{"-serve", "-encrypt", "maybe"}, {"-record-size", "20000"}, {"extra"}, {"-control"}, {"-control", "-mode", "transport"},
		{"-mode", "faults", "-fault-repeat", "0"},
	} {
		stderr.Reset()
		if _, err := parseFlags(bad, &stderr, env); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		} else if stderr.Len() == 0 {
			t.Errorf("parseFlags(%q) said nothing on stderr", bad)
		}
	}
}

// TestControlArms checks that a control run connects every driver arm, bridged ones included,
// with go-mssqldb's own connector, and keeps the arms' names and encrypt settings.
func TestControlArms(t *testing.T) {
	native := reflect.ValueOf(nativeConnector).Pointer()
	for _, control := range []bool{false, true} {
		cfg := &config{mode: modeDriver, control: control}
		got := cfg.armSpecs(driverArmSpecs)
		for i, s := range got {
			want := driverArmSpecs[i]
			if s.name != want.name || s.encrypt != want.encrypt {
				t.Errorf("control %v: arm %d = %s/%s, want %s/%s", control, i, s.name, s.encrypt, want.name, want.encrypt)
			}
			isNative := reflect.ValueOf(s.newConnector).Pointer() == native
			if wantNative := control || reflect.ValueOf(want.newConnector).Pointer() == native; isNative != wantNative {
				t.Errorf("control %v: arm %s native connector %v, want %v", control, s.name, isNative, wantNative)
			}
		}
	}
	if reflect.ValueOf(specBridgedTLS.newConnector).Pointer() == native {
		t.Fatal("the bridged TLS arm is native outside a control run")
	}
}

// TestSmokeControl runs a one-round control run and checks that the table and the JSON say so.
func TestSmokeControl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process and measures for a second")
	}
	out, _, rep := runWithJSON(t, "-mode", "driver", "-control", "-cells", "round trip SET NOCOUNT ON", "-rounds", "1", "-duration", "1s", "-idle-rounds", "0", "-dsn", "")
	if !strings.Contains(out, "CONTROL RUN") {
		t.Errorf("the table does not say it is a control run:\n%s", out)
	}
	if !rep.Control || len(rep.Cells) != 1 || len(rep.Cells[0].Arms) != 4 {
		t.Errorf("JSON: control %v, %d cells, want a control run of one cell with four arms", rep.Control, len(rep.Cells))
	}
}

func TestWithParams(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sqlserver://sa:pw@h:1433?Encrypt=false&database=x", "sqlserver://sa:pw@h:1433?database=x&encrypt=true&packet+size=4096"},
		{"server=h;user id=sa;password=pw;", "server=h;user id=sa;password=pw;encrypt=true;packet size=4096"},
	}
	for _, tt := range tests {
		got, err := withParams(tt.in, map[string]string{"encrypt": "true", "packet size": "4096"})
		if err != nil || got != tt.want {
			t.Errorf("withParams(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if got := redactDSN("sqlserver://sa:secret@h:1433/inst?x=1"); got != "h:1433/inst" {
		t.Errorf("redactDSN(URL) = %q", got)
	}
	if got := redactDSN("server=h,1433;password=secret"); got != "h,1433" {
		t.Errorf("redactDSN(ADO) = %q", got)
	}
}

// TestSmokeDSN runs the driver comparison against a server given by -dsn (here a tdstest server
// in this process): the value cells with all four arms, no record-size sweep.
func TestSmokeDSN(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for a second")
	}
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-mode", "driver", "-rounds", "1", "-size", "2048", "-rows", "50", "-idle-rounds", "0", "-duration", "1s", "-dsn", srv.DSN("TrustServerCertificate=true", "encrypt=false")}
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if want := "driver server: " + srv.Addr + " (from -dsn"; !strings.Contains(out, want) {
		t.Errorf("table lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "records") || strings.Contains(out, "== Transport") || strings.Contains(out, freshCellPrefix) {
		t.Errorf("-dsn -mode driver ran the sweep, the fresh-process or the transport cells:\n%s", out)
	}
	if strings.Contains(out, "tdstest-Passw0rd") || strings.Contains(stderr.String(), "tdstest-Passw0rd") {
		t.Errorf("the password leaked into the output")
	}
	for _, arm := range []string{report.ArmNativeTLS, report.ArmBridgedTLS, report.ArmNativePlain, report.ArmBridgedPlain} {
		if !strings.Contains(out, arm) {
			t.Errorf("table lacks arm %q:\n%s", arm, out)
		}
	}
}

// TestSetupFailure: a server that cannot be reached fails the run cleanly: exit code 1, an
// error on stderr, no table, nothing left running (goleak checks the last part).
func TestSetupFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there any more
	var stdout, stderr bytes.Buffer
	args := []string{"-mode", "driver", "-rounds", "1", "-duration", "1s", "-dsn", "sqlserver://sa:pw@" + addr + "?dial+timeout=2"}
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("run = %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "bench: native TLS, packet size 4096") {
		t.Errorf("stderr lacks the failing arm:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("a table was printed after a setup failure:\n%s", stdout.String())
	}
}

// TestSmokeDSNPlaintextRefused: against a server that requires encryption (tdstest's setting
// ON refuses a client that sends NOT_SUP), the plaintext arms are left out with a note, the
// workload bytes are counted through TLS, and the TLS arms are measured, idle figure included.
func TestSmokeDSNPlaintextRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for a second")
	}
	srv, err := tdstest.NewServer(tdstest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-mode", "driver", "-rounds", "1", "-size", "2048", "-rows", "20", "-idle-conns", "2", "-idle-rounds", "1",
		"-cells", "varbinary/4096$|narrow|idle", "-duration", "1s", "-dsn", srv.DSN("TrustServerCertificate=true")}
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out, errs := stdout.String(), stderr.String()
	for _, want := range []string{"leaving the native plain arm out", "leaving the bridged plain arm out", "counting through TLS instead"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// One note per arm for the cells (the idle figure notes its own), without a doubled prefix.
	if n := strings.Count(errs, "packet size 4096: connect: TLS Handshake failed"); n != 1 || strings.Contains(errs, "bench: bench:") {
		t.Errorf("the native plain arm's failure is noted %d times (want 1), or with a doubled prefix:\n%s", n, errs)
	}
	if !strings.Contains(out, "(TLS bytes (TDS plus record overhead) received)") {
		t.Errorf("the narrow-rows cell does not say its bytes were counted through TLS:\n%s", out)
	}
	if reporttest.LineWith(out, "narrow rows x20", report.ArmNativeTLS) == "" || reporttest.LineWith(out, report.ArmBridgedTLS, "/row") == "" {
		t.Errorf("narrow-rows TLS arms missing:\n%s", out)
	}
	if reporttest.LineWith(out, report.ArmNativePlain, "/row") != "" {
		t.Errorf("a plaintext arm was measured against a server that refuses plaintext:\n%s", out)
	}
	if idle := strings.SplitN(out, "== Idle", 2); len(idle) != 2 || reporttest.LineWith(idle[1], report.ArmBridgedTLS+"  ", "[") == "" || reporttest.LineWith(idle[1], report.ArmNativePlain) != "" {
		t.Errorf("want an idle figure for the TLS arms alone:\n%s", out)
	}
}
