package tdstest

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// jtdsJar is where Debian's libjtds-java installs jTDS 1.3.1.
const jtdsJar = "/usr/share/java/jtds.jar"

// The batches the jTDS client runs, in order (the first number of each line it prints).
var jtdsBatches = []string{
	querySelect1,
	queryBig,
	fmt.Sprintf("SELECT CAST(REPLICATE(CAST('ab' AS varchar(max)), %d) AS varbinary(max))", bigLen/2),
	"BEGIN TRAN; SELECT @@TRANCOUNT; ROLLBACK; SELECT @@TRANCOUNT",
}

// jtdsWant is what testdata/java/JtdsClient.java prints for jtdsBatches: SELECT 1; the
// nvarchar(max) and varbinary(max) values, which a TDS 7.1 login receives as ntext and image
// (see longtypes.go), of bigLen characters and bytes, with their SHA-256; and the transaction
// count after BEGIN TRAN and after ROLLBACK within one batch.
func jtdsWant() string {
	lines := []string{
		"0\t0\t0\t0\tint\t1",
		fmt.Sprintf("1\t0\t0\t0\tntext\t<%d chars, sha256 %x>", bigLen, sha256.Sum256([]byte(strings.Repeat("x", bigLen)))),
		fmt.Sprintf("2\t0\t0\t0\timage\t<%d bytes, sha256 %x>", bigLen, sha256.Sum256([]byte(strings.Repeat("ab", bigLen/2)))),
		"3\t0\t0\t0\tint\t1",
		"3\t1\t0\t0\tint\t0",
		"done",
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestJtds runs jTDS 1.3.1 (Debian libjtds-java, a Java JDBC driver) under Java 17 against the
// server, at the TDS version it speaks to SQL Server by default, 7.1 (which jTDS names "8.0",
// after SQL Server 2000: no relation to TDS 8.0's strict encryption, which jTDS lacks). The
// program testdata/java/JtdsClient.java is compiled with javac into a temporary folder.
func TestJtds(t *testing.T) {
	java := lookTool(t, "java", "Java 17, Debian package openjdk-17-jre-headless")
	javac := lookTool(t, "javac", "Java 17, Debian package openjdk-17-jdk-headless")
	if _, err := os.Stat(jtdsJar); err != nil {
		missingClient(t, "jTDS not installed (install Debian package libjtds-java): %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "java", "JtdsClient.java"))
	if err != nil {
		t.Fatal(err)
	}
	classes := t.TempDir()
	runTool(t, exec.CommandContext(toolContext(t), javac, "-d", classes, src))

	tests := []struct {
		name string
		cfg  Config
		ssl  string // jTDS's ssl property
		mode string // the mode the server must log (Mode.Name)
		skip string
	}{
		// With ssl=off jTDS sends LOGIN7 first, without PRELOGIN.
		{"ssl=off, server NOT_SUP", Config{Encryption: EncryptNotSup}, "off", "none", ""},
		{"ssl=off, server OFF", Config{Encryption: EncryptOff}, "off", "none", ""},
		// TLS 1.2 inside PRELOGIN with Java 17's defaults. jTDS trusts any certificate.
		{"ssl=require, server ON", Config{}, "require", "full", ""},
		{"ssl=require, server ON, RSA", Config{Cert: CertRSA2048}, "require", "full", ""},
		{"ssl=require, server ON, large chain", Config{Cert: CertLargeChain}, "require", "full", ""},
		{"ssl=request, server ON", Config{}, "request", "full", ""},
		{"ssl=request, server OFF", Config{Encryption: EncryptOff}, "request", "login-only",
			"jTDS 1.3.1 cannot log in with login-only encryption under Java 11 and later: after sending " +
				"LOGIN7 it closes its TLS socket (SharedSocket.disableEncryption), and the JDK's " +
				"SSLSocketImpl, closing a layered socket with autoClose, skips every byte already available " +
				"on the TCP socket beneath (SSLSocketInputRecord.deplete), so the server's plaintext login " +
				"response is lost whenever it has arrived and jTDS waits for it until its login timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			t.Parallel() // external processes: overlap their start-up
			s, log := startServer(t, tc.cfg)
			url := fmt.Sprintf("jdbc:jtds:sqlserver://127.0.0.1:%d/master;ssl=%s;TDS=8.0;loginTimeout=20", port(t, s), tc.ssl)
			args := append([]string{"-cp", classes + string(os.PathListSeparator) + jtdsJar, "JtdsClient",
				url, s.Config.user(), s.Config.password()}, jtdsBatches...)
			out := runTool(t, exec.CommandContext(toolContext(t), java, args...))
			if want := jtdsWant(); out != want {
				t.Errorf("jTDS printed:\n%.2000s\nwant:\n%s", out, want)
			}
			log.wantMode(t, tc.mode, 4096)
			// 0x71000001: LOGIN7's TDS 7.1 (revision 1), as the server log writes the version a client sent.
			if !strings.Contains(log.String(), `(TDS 0x71000001, `+tc.mode+`, app "jTDS"`) {
				t.Errorf("no TDS 7.1 login of jTDS in the server log")
			}
			if strings.Contains(log.String(), "refused") {
				t.Errorf("the server refused a request of jTDS's")
			}
		})
	}
}
