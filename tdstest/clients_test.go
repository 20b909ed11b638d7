package tdstest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// The queries every independent client runs, and what they must return.
const (
	querySelect1 = "SELECT 1"
	queryBig     = "SELECT REPLICATE(CAST(N'x' AS nvarchar(max)), 524288)"
	bigLen       = 524288
)

// recordingLog passes the server log to t and keeps it for assertions.
type recordingLog struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func newRecordingLog(t *testing.T) *recordingLog { return &recordingLog{t: t} }

func (l *recordingLog) logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.t.Log(s)
	l.mu.Lock()
	l.b.WriteString(s + "\n")
	l.mu.Unlock()
}

func (l *recordingLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wantMode checks that a connection logged in with the encryption mode of that name (as the log
// and Mode.Name give it) and with the packet size.
func (l *recordingLog) wantMode(t *testing.T, mode string, packetSize int) {
	t.Helper()
	want := fmt.Sprintf(", %s, app", mode)
	size := fmt.Sprintf("packet size %d ", packetSize)
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, "login of") && strings.Contains(line, want) && strings.Contains(line, size) {
			return
		}
	}
	t.Errorf("no login in mode %q with packet size %d in the server log", mode, packetSize)
}

// startServer starts a server logging to a recordingLog and closes it at the end of the test.
func startServer(t *testing.T, cfg Config) (*Server, *recordingLog) {
	t.Helper()
	log := newRecordingLog(t)
	cfg.Logf = log.logf
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s, log
}

// requireClientsEnv names the environment variable that turns a missing independent client into
// a test failure: with TDSBRIDGE_REQUIRE_CLIENTS=1 the suites of the independent clients cannot
// pass by skipping.
const requireClientsEnv = "TDSBRIDGE_REQUIRE_CLIENTS"

// skipFataler is the part of testing.TB that missingClient uses.
type skipFataler interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// missingClient skips the test with a message naming the client and how to install it, or fails
// it when requireClientsEnv is 1. The skip message starts with "missing: ", which the skip lines
// of `make test` (scripts/testsummary) count as something this machine lacks.
func missingClient(t skipFataler, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireClientsEnv) == "1" {
		t.Fatalf("%s=1 and "+format, append([]any{requireClientsEnv}, args...)...)
		return
	}
	t.Skipf("missing: "+format+"; `bash .ci/run` installs every client", args...)
}

// lookTool returns the path of an installed program, or skips (fails, see missingClient) the
// test naming the package.
func lookTool(t *testing.T, path, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(path)
	if err != nil {
		missingClient(t, "%s not installed (install %s): %v", path, pkg, err)
	}
	return p
}

func runTool(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %.2000s\nstderr: %.4000s", cmd.Path, err, stdout.String(), stderr.String())
	}
	if strings.TrimSpace(stderr.String()) != "" {
		t.Logf("%s stderr: %.2000s", filepath.Base(cmd.Path), stderr.String())
	}
	return stdout.String()
}

func toolContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func port(t *testing.T, s *Server) int {
	_, p, _ := strings.Cut(s.Addr, ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFreeTDS runs FreeTDS tsql (Debian freetds-bin) against the server.
func TestFreeTDS(t *testing.T) {
	tsql := lookTool(t, "tsql", "Debian package freetds-bin")
	tests := []struct {
		name       string
		cfg        Config
		encryption string
		blockSize  int
		mode       prelogin.Mode
		wantSize   int
	}{
		{"require, server ON", Config{}, "require", 4096, prelogin.ModeFull, 4096},
		{"require, 16384", Config{}, "require", 16384, prelogin.ModeFull, 16383},
		{"request, server ON", Config{}, "request", 4096, prelogin.ModeFull, 4096},
		{"request, server OFF", Config{Encryption: EncryptOff}, "request", 4096, prelogin.ModeLoginOnly, 4096},
		{"request, server OFF, 16384", Config{Encryption: EncryptOff}, "request", 16384, prelogin.ModeLoginOnly, 16384},
		{"require, large chain", Config{Cert: CertLargeChain}, "require", 4096, prelogin.ModeFull, 4096},
		{"off, server NOT_SUP", Config{Encryption: EncryptNotSup}, "off", 4096, prelogin.ModeNone, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // external processes: overlap their start-up
			s, log := startServer(t, tc.cfg)
			dir := t.TempDir()
			conf := filepath.Join(dir, "freetds.conf")
			text := fmt.Sprintf("[tdstest]\n\thost = 127.0.0.1\n\tport = %d\n\ttds version = 7.4\n\tencryption = %s\n\tca file = %s\n\tinitial block size = %d\n",
				port(t, s), tc.encryption, s.CAFile(), tc.blockSize)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(toolContext(t), tsql, "-S", "tdstest", "-U", s.Config.user(), "-P", s.Config.password())
			cmd.Env = append(os.Environ(), "FREETDSCONF="+conf)
			series := strings.Replace(SeriesQuery, "@p1", "CAST(1000 AS bigint)", 1) // tsql sends batches only
			cmd.Stdin = strings.NewReader(querySelect1 + "\ngo\n" + queryBig + "\ngo\n" + series + "\ngo\nexit\n")
			out := runTool(t, cmd)
			lines := strings.Split(out, "\n")
			var gotOne, gotBig bool
			var seriesSum int
			for _, l := range lines {
				l = strings.TrimSpace(l)
				if l == "1" {
					gotOne = true
				}
				if len(l) == bigLen && strings.Trim(l, "x") == "" {
					gotBig = true
				}
				if n, err := strconv.Atoi(l); err == nil {
					seriesSum += n // SELECT 1 adds 1 too
				}
			}
			if !gotOne || !gotBig || seriesSum != 1+1000*1001/2 {
				t.Fatalf("tsql output: SELECT 1 seen %v, %d x seen %v, series sum %d\n%.500s", gotOne, bigLen, gotBig, seriesSum-1, out)
			}
			log.wantMode(t, tc.mode.String(), tc.wantSize)
		})
	}
}

// clientLine is one JSON line printed by the node and python clients.
type clientLine struct {
	Query      *int            `json:"query"`
	Value      json.RawMessage `json:"value"`
	Row        json.RawMessage `json:"row"`
	Rows       int64           `json:"rows"`
	Sum        int64           `json:"sum"`
	Len        int             `json:"len"`
	Done       bool            `json:"done"`
	PacketSize int             `json:"packetSize"`
}

// The parameterized queries every independent client runs (see checkParamQueries).
const (
	queryParams = 2 // index of SELECT @p1, ... in the client's query list
	querySeries = 3 // index of SeriesQuery
	queryWide   = 4 // index of WideRowsQuery
	seriesN     = 1000
	wideN       = 100
)

// checkParamQueries checks the lines of the parameterized SELECT, the series query and the
// wide rows: the first row a client decoded must equal want and wantWide (compared as JSON
// values), and the row counts and sums of the first column must be right.
func checkParamQueries(t *testing.T, res []clientLine, want, wantWide string) {
	t.Helper()
	sameJSON(t, "SELECT @p1, ...", res[queryParams].Row, want)
	sameJSON(t, "wide rows", res[queryWide].Row, wantWide)
	for _, c := range []struct {
		i int
		n int64
	}{{querySeries, seriesN}, {queryWide, wideN}} {
		if l := res[c.i]; l.Rows != c.n || l.Sum != c.n*(c.n+1)/2 {
			t.Errorf("query %d: %d rows, sum %d; want %d, %d", c.i, l.Rows, l.Sum, c.n, c.n*(c.n+1)/2)
		}
	}
}

// sameJSON checks that a row a client printed equals want, compared as JSON values.
func sameJSON(t *testing.T, name string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s row %s: %v", name, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func parseClientLines(t *testing.T, out string, queries int) []clientLine {
	t.Helper()
	var res []clientLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var l clientLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("client output line %.200q: %v", sc.Text(), err)
		}
		res = append(res, l)
	}
	if len(res) != queries+1 || !res[queries].Done {
		t.Fatalf("client output: %.500s", out)
	}
	return res
}

// TestTedious runs tedious 19.2.2 (npm, testdata/node) under Node.
func TestTedious(t *testing.T) {
	node := lookTool(t, "node", "Node.js 20")
	dir, err := filepath.Abs(filepath.Join("testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tedious", "package.json")); err != nil {
		missingClient(t, "tedious not installed (run npm install --no-package-lock in %s): %v", dir, err)
	}
	tests := []struct {
		name       string
		cfg        Config
		encrypt    any
		packetSize int
		mode       prelogin.Mode
		wantSize   int
	}{
		{"encrypt, 4096", Config{}, true, 4096, prelogin.ModeFull, 4096},
		{"encrypt, 16384", Config{}, true, 16384, prelogin.ModeFull, 16383},
		{"encrypt, 16384, large chain", Config{Cert: CertLargeChain}, true, 16384, prelogin.ModeFull, 16383},
		{"no encryption, 4096", Config{Encryption: EncryptOff}, false, 4096, prelogin.ModeNone, 4096},
		{"no encryption, 16384", Config{Encryption: EncryptNotSup}, false, 16384, prelogin.ModeNone, 16384},
		{"strict, 4096", Config{Encryption: EncryptStrict}, "strict", 4096, prelogin.ModeStrict, 4096},
		{"strict, 16384", Config{Encryption: EncryptStrict}, "strict", 16384, prelogin.ModeStrict, 16383},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // external processes: overlap their start-up
			s, log := startServer(t, tc.cfg)
			writes := tediousWrites()
			queries, params := appendWrites(
				[]any{querySelect1, queryBig, tediousParamQuery, SeriesQuery, WideRowsQuery},
				[]any{nil, nil, tediousParams,
					[]any{map[string]any{"name": "p1", "type": "BigInt", "value": seriesN}},
					[]any{map[string]any{"name": "p1", "type": "BigInt", "value": wideN}}},
				writes)
			arg, _ := json.Marshal(map[string]any{
				"host": "127.0.0.1", "port": port(t, s), "user": s.Config.user(), "password": s.Config.password(),
				"encrypt": tc.encrypt, "packetSize": tc.packetSize, "caFile": s.CAFile(),
				"queries": queries, "params": params,
			})
			cmd := exec.CommandContext(toolContext(t), node, filepath.Join(dir, "client.js"), string(arg))
			cmd.Dir = dir
			res := parseClientLines(t, runTool(t, cmd), len(queries))
			checkParamQueries(t, res, tediousWantRow, `[1, "name-1", "2026-01-01T00:00:01.000Z", 0.25, true]`)
			checkWrites(t, res[queryWide+1:], writes, log)
			var one int
			var big string
			if err := json.Unmarshal(res[0].Value, &one); err != nil || one != 1 {
				t.Errorf("SELECT 1 gave %s (%v)", res[0].Value, err)
			}
			if err := json.Unmarshal(res[1].Value, &big); err != nil || len(big) != bigLen || strings.Trim(big, "x") != "" {
				t.Errorf("nvarchar(max) gave %d characters (%v)", len(big), err)
			}
			if res[len(queries)].PacketSize != tc.wantSize {
				t.Errorf("tedious packet size %d, want %d", res[len(queries)].PacketSize, tc.wantSize)
			}
			log.wantMode(t, tc.mode.String(), tc.wantSize)
		})
	}
}

// pythonPath is Debian's python, which has python3-tds and python3-openssl (not a pyenv one).
const pythonPath = "/usr/bin/python3"

// TestPytds runs pytds (Debian python3-tds with python3-openssl).
func TestPytds(t *testing.T) {
	py := lookTool(t, pythonPath, "Debian python3")
	if err := exec.Command(py, "-c", "import pytds, OpenSSL").Run(); err != nil {
		missingClient(t, "pytds or pyOpenSSL not importable by %s (install Debian packages python3-tds python3-openssl): %v", py, err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "python", "pytds_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		cfg        Config
		tls        bool
		loginOnly  bool
		blocksize  int
		mode       prelogin.Mode
		autocommit bool
	}{
		{"full, 4096", Config{}, true, false, 4096, prelogin.ModeFull, true},
		{"full, 4096, transactions (autocommit off)", Config{}, true, false, 4096, prelogin.ModeFull, false},
		{"full, 16384", Config{}, true, false, 16384, prelogin.ModeFull, true},
		{"login-only, 4096", Config{Encryption: EncryptOff}, true, true, 4096, prelogin.ModeLoginOnly, true},
		{"login-only, 4096, transactions (autocommit off)", Config{Encryption: EncryptOff}, true, true, 4096, prelogin.ModeLoginOnly, false},
		{"login-only, 16384", Config{Encryption: EncryptOff}, true, true, 16384, prelogin.ModeLoginOnly, true},
		{"login-only asked, server ON", Config{}, true, true, 4096, prelogin.ModeFull, true},
		{"no TLS", Config{Encryption: EncryptOff}, false, false, 4096, prelogin.ModeNone, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // external processes: overlap their start-up
			s, log := startServer(t, tc.cfg)
			var ca any
			if tc.tls {
				ca = s.CAFile()
			}
			writes := pytdsWrites(tc.autocommit)
			queries, params := appendWrites(
				[]any{querySelect1, queryBig, pytdsParamQuery, strings.Replace(SeriesQuery, "@p1", "%s", 1),
					strings.Replace(strings.ReplaceAll(WideRowsQuery, "%", "%%"), "@p1", "%s", 1)}, // pyformat
				[]any{nil, nil, pytdsParams,
					[]any{map[string]any{"decl": "bigint", "value": seriesN}},
					[]any{map[string]any{"decl": "bigint", "value": wideN}}},
				writes)
			arg, _ := json.Marshal(map[string]any{
				"host": "localhost", "port": port(t, s), "user": s.Config.user(), "password": s.Config.password(),
				"cafile": ca, "enc_login_only": tc.loginOnly, "blocksize": tc.blocksize, "autocommit": tc.autocommit,
				"queries": queries, "params": params,
			})
			cmd := exec.CommandContext(toolContext(t), py, script, string(arg))
			res := parseClientLines(t, runTool(t, cmd), len(queries))
			// pytds divides the scaled integer, so 0.2500 comes out as 0.25.
			checkParamQueries(t, res, pytdsWantRow, `[1, "name-1", "2026-01-01T00:00:01", "0.25", true]`)
			checkWrites(t, res[queryWide+1:], writes, log)
			var one int
			var chars string
			if err := json.Unmarshal(res[0].Value, &one); err != nil || one != 1 {
				t.Errorf("SELECT 1 gave %s (%v)", res[0].Value, err)
			}
			if err := json.Unmarshal(res[1].Value, &chars); err != nil || res[1].Len != bigLen || chars != "x" {
				t.Errorf("nvarchar(max) gave %d characters of %q (%v)", res[1].Len, chars, err)
			}
			want := tc.blocksize
			if tc.mode == prelogin.ModeFull {
				want = min(want, 16383)
			}
			log.wantMode(t, tc.mode.String(), want)
		})
	}
}

// tediousParams are the parameters of tediousParamQuery: every common type and a NULL.
var tediousParams = []any{
	map[string]any{"name": "p1", "type": "Bit", "value": true},
	map[string]any{"name": "p2", "type": "Int", "value": -7},
	map[string]any{"name": "p3", "type": "BigInt", "value": "1234567890123"},
	map[string]any{"name": "p4", "type": "Decimal", "value": -1234.5678, "options": map[string]any{"precision": 18, "scale": 4}},
	map[string]any{"name": "p5", "type": "Float", "value": 3.25},
	map[string]any{"name": "p6", "type": "NVarChar", "value": "héllo"},
	map[string]any{"name": "p7", "type": "VarBinary", "value": "00ff10"},
	map[string]any{"name": "p8", "type": "DateTime2", "value": "2026-03-04T05:06:07.123Z", "options": map[string]any{"scale": 7}},
	map[string]any{"name": "p9", "type": "Date", "value": "2026-03-04T00:00:00Z"},
	map[string]any{"name": "p10", "type": "UniqueIdentifier", "value": "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
	map[string]any{"name": "p11", "type": "NVarChar", "value": nil},
}

const (
	tediousParamQuery = "SELECT @p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, @p10, @p11"
	tediousWantRow    = `[true, -7, "1234567890123", -1234.5678, 3.25, "héllo", "00ff10", "2026-03-04T05:06:07.123Z", "2026-03-04T00:00:00.000Z", "6F9619FF-8B86-D011-B42D-00C04FC964FF", null]`
)

// pytdsParams are the parameters of pytdsParamQuery, typed by declaration.
var pytdsParams = []any{
	map[string]any{"decl": "bit", "value": true},
	map[string]any{"decl": "int", "value": -7},
	map[string]any{"decl": "bigint", "value": 1234567890123},
	map[string]any{"decl": "DECIMAL(18, 4)", "value": "-1234.5678"},
	map[string]any{"decl": "float", "value": 3.25},
	map[string]any{"decl": "nvarchar(50)", "value": "héllo"},
	map[string]any{"decl": "varbinary(8000)", "value": "00ff10"},
	map[string]any{"decl": "datetime2(7)", "value": "2026-03-04T05:06:07.123456"},
	map[string]any{"decl": "date", "value": "2026-03-04"},
	map[string]any{"decl": "uniqueidentifier", "value": "6f9619ff-8b86-d011-b42d-00c04fc964ff"},
	map[string]any{"decl": "nvarchar(10)", "value": nil},
}

const (
	pytdsParamQuery = "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
	pytdsWantRow    = `[true, -7, 1234567890123, "-1234.5678", 3.25, "héllo", "00ff10", "2026-03-04T05:06:07.123456", "2026-03-04", "6f9619ff-8b86-d011-b42d-00c04fc964ff", null]`
)

// recordingTB records what missingClient does with a test.
type recordingTB struct{ skipped, failed string }

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// TestMissingClientSwitch: a missing client skips the test, or fails it under
// TDSBRIDGE_REQUIRE_CLIENTS=1, with a message naming the client and how to install it.
func TestMissingClientSwitch(t *testing.T) {
	const msg = "tsql not installed (install Debian package freetds-bin)"
	for _, require := range []string{"", "0", "1"} {
		t.Run("require="+require, func(t *testing.T) {
			t.Setenv(requireClientsEnv, require)
			var r recordingTB
			missingClient(&r, "tsql not installed (install %s)", "Debian package freetds-bin")
			got, other := r.skipped, r.failed
			if require == "1" {
				got, other = r.failed, r.skipped
			}
			if !strings.Contains(got, msg) || other != "" {
				t.Fatalf("skipped %q, failed %q", r.skipped, r.failed)
			}
			if require != "1" && !strings.HasPrefix(got, "missing: ") {
				t.Fatalf("skip %q does not start with the prefix of what this machine lacks", got)
			}
			if require == "1" && !strings.Contains(got, requireClientsEnv+"=1") {
				t.Fatalf("failure %q does not name the switch", got)
			}
		})
	}
}
