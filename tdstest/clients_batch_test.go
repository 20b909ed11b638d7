package tdstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreeTDSBatchRunsInOrder: through FreeTDS tsql, a statement sees what the statements before
// it in the same batch did to the session (transaction count, database, @@ROWCOUNT). Each SELECT
// of a checked value carries a label, which tsql prints before the value, separated by a tab.
func TestFreeTDSBatchRunsInOrder(t *testing.T) {
	tsql := lookTool(t, "tsql", "Debian package freetds-bin")
	s, _ := startServer(t, Config{Encryption: EncryptNotSup})
	conf := filepath.Join(t.TempDir(), "freetds.conf")
	text := fmt.Sprintf("[tdstest]\n\thost = 127.0.0.1\n\tport = %d\n\ttds version = 7.4\n\tencryption = off\n", port(t, s))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	batches := []string{
		"BEGIN TRAN; SELECT N'trancount', @@TRANCOUNT",
		"BEGIN TRAN; COMMIT; SELECT N'trancount after an inner COMMIT', @@TRANCOUNT; ROLLBACK; SELECT N'trancount after ROLLBACK', @@TRANCOUNT",
		"USE tempdb; SELECT N'database', DB_NAME()",
		"SELECT value FROM GENERATE_SERIES(CAST(1 AS bigint), CAST(7 AS bigint)); SELECT N'rowcount after 7 rows', @@ROWCOUNT; " +
			"SET NOCOUNT OFF; SELECT N'rowcount after SET', @@ROWCOUNT",
	}
	cmd := exec.CommandContext(toolContext(t), tsql, "-S", "tdstest", "-U", s.Config.user(), "-P", s.Config.password())
	cmd.Env = append(os.Environ(), "FREETDSCONF="+conf)
	cmd.Stdin = strings.NewReader(strings.Join(batches, "\ngo\n") + "\ngo\nexit\n")
	out := runTool(t, cmd)
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if label, v, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok {
			got[label] = v
		}
	}
	want := map[string]string{
		"trancount": "1", "trancount after an inner COMMIT": "1", "trancount after ROLLBACK": "0",
		"database": "tempdb", "rowcount after 7 rows": "7", "rowcount after SET": "0",
	}
	for label, v := range want {
		if got[label] != v {
			t.Errorf("%s = %q, want %q", label, got[label], v)
		}
	}
	if t.Failed() {
		t.Logf("tsql output:\n%.2000s", out)
	}
}
