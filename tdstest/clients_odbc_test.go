package tdstest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// odbcDriverGlob finds FreeTDS's ODBC driver as Debian's tdsodbc installs it (the directory
// names the architecture).
const odbcDriverGlob = "/usr/lib/*/odbc/libtdsodbc.so"

// TestPyodbc runs pyodbc over FreeTDS's ODBC driver (Debian python3-pyodbc, tdsodbc, unixodbc),
// the stack many Python users of SQL Server on Linux run, in every mode FreeTDS 1.3.17 can
// reach. The driver is named by path in the connection string and configured through a
// freetds.conf given by FREETDSCONF, as TestFreeTDS configures tsql: no system file is touched.
func TestPyodbc(t *testing.T) {
	py := lookTool(t, pythonPath, "Debian python3")
	if err := exec.Command(py, "-c", "import pyodbc").Run(); err != nil {
		missingClient(t, "pyodbc not importable by %s (install Debian packages python3-pyodbc unixodbc): %v", py, err)
	}
	drivers, _ := filepath.Glob(odbcDriverGlob)
	if len(drivers) == 0 {
		missingClient(t, "FreeTDS ODBC driver %s not found (install Debian package tdsodbc)", odbcDriverGlob)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "python", "pyodbc_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode       string // a Mode name (Modes)
		encryption string // FreeTDS's encryption setting
		blockSize  int
		skip       string
	}{
		{"none", "off", 4096, ""},
		{"login-only", "request", 4096, ""},
		{"full", "require", 4096, ""},
		{"full", "require", 16384, ""},
		{"strict", "", 4096, "FreeTDS 1.3.17 has no TDS 8.0 (strict encryption); its ODBC driver cannot connect to a strict server"},
	}
	modes := map[string]Mode{}
	for _, m := range Modes() {
		modes[m.Name] = m
	}
	upload := map[string]any{"fill": fmt.Sprintf("%02x", uploadFill), "length": uploadLen}
	steps := []map[string]any{
		{"sql": querySelect1},
		{"sql": queryBig},
		{"sql": "SELECT ?, ?", "params": []any{42, "hello"}},
		{"sql": "SELECT ?, ?", "params": []any{-7, "héllo again"}},                     // pyodbc prepares it again (sp_prepexec)
		{"sql": "SELECT CAST(SERVERPROPERTY('ProductVersion') AS varchar), @@VERSION"}, // pyodbc reads no sql_variant
		{"sql": "SELECT DATALENGTH(?), ?", "params": []any{upload, upload}},
		{"sql": "SELECT @@TRANCOUNT"},
		{"commit": true},
		{"sql": "SELECT @@TRANCOUNT"},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s, encryption %s, %d", tc.mode, tc.encryption, tc.blockSize)
		t.Run(name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			t.Parallel() // external processes: overlap their start-up
			s, log := startServer(t, modes[tc.mode].Config)
			conf := filepath.Join(t.TempDir(), "freetds.conf")
			text := fmt.Sprintf("[tdstest]\n\thost = 127.0.0.1\n\tport = %d\n\ttds version = 7.4\n\tencryption = %s\n\tca file = %s\n\tinitial block size = %d\n",
				port(t, s), tc.encryption, s.CAFile(), tc.blockSize)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			arg, _ := json.Marshal(map[string]any{
				"driver": drivers[0], "servername": "tdstest", "user": s.Config.user(), "password": s.Config.password(),
				"steps": steps,
			})
			cmd := exec.CommandContext(toolContext(t), py, script, string(arg))
			cmd.Env = append(os.Environ(), "FREETDSCONF="+conf, "ODBCSYSINI="+filepath.Dir(conf))
			res := parseClientLines(t, runTool(t, cmd), len(steps))
			sameJSON(t, "SELECT 1", res[0].Row, "[1]")
			var chars string
			if err := json.Unmarshal(res[1].Value, &chars); err != nil || res[1].Len != bigLen || chars != "x" {
				t.Errorf("nvarchar(max) gave %d characters of %q (%v)", res[1].Len, chars, err)
			}
			sameJSON(t, "SELECT ?, ?", res[2].Row, `[42, "hello"]`)
			sameJSON(t, "SELECT ?, ? again", res[3].Row, `[-7, "héllo again"]`)
			sameJSON(t, "version", res[4].Row, fmt.Sprintf(`["%s", "<%d characters>"]`, serverProductVersion, len(serverVersionStr)))
			sameJSON(t, "1 MiB upload", res[5].Row, fmt.Sprintf(`[%d, %q]`, uploadLen, uploadSummary()))
			sameJSON(t, "@@TRANCOUNT before the commit", res[6].Row, "[1]")
			sameJSON(t, "@@TRANCOUNT after the commit (FreeTDS begins the next)", res[8].Row, "[1]")
			want := 4096
			if tc.blockSize > 4096 {
				want = min(tc.blockSize, 16383)
			}
			log.wantMode(t, tc.mode, want)
			for _, line := range []string{"transaction 1 committed", "transaction 2 rolled back"} {
				if !strings.Contains(log.String(), line) {
					t.Errorf("server log lacks %q", line)
				}
			}
			if strings.Contains(log.String(), "refused") {
				t.Errorf("the server refused a request of pyodbc's")
			}
		})
	}
}
