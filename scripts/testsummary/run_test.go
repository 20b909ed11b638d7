package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// module writes a throw-away module with the given files (path -> content) and makes it the
// working directory of the test.
func module(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")
}

const mixedTests = `package a

import "testing"

func TestPass(t *testing.T) {}

func TestFail(t *testing.T) {
	t.Log("diagnostic line")
	t.Error("boom")
}

func TestSkipA(t *testing.T) { t.Skip("missing: client (install it)") }
func TestSkipB(t *testing.T) { t.Skip("missing: client (install it)") }
func TestSkipLines(t *testing.T) { t.Log("before"); t.Skip("missing: engine (error:\nsecond line); start one") }
func TestSkipNoReason(t *testing.T) { t.SkipNow() }

func TestParent(t *testing.T) {
	t.Run("a", func(t *testing.T) {})
	t.Run("b", func(t *testing.T) { t.Skipf("sub %s", "skipped") })
}
`

const passingTests = `package b

import "testing"

func TestOK(t *testing.T) { t.Log("not shown") }
`

// TestRunReportsFailuresAndSkips runs real `go test -json` on a module with passing, failing
// and skipped tests, and checks the exit status, the failure output and the summary lines.
func TestRunReportsFailuresAndSkips(t *testing.T) {
	module(t, map[string]string{"a/a_test.go": mixedTests, "b/b_test.go": passingTests})
	var out, errOut bytes.Buffer
	code := run([]string{"-count=1", "./..."}, &out, &errOut)
	got := out.String()
	if code != 1 {
		t.Errorf("exit status %d, want 1\n%s%s", code, got, errOut.String())
	}
	for _, want := range []string{
		"diagnostic line", "boom", "--- FAIL: TestFail",
		"FAIL\texample.com/m/a", "ok  \texample.com/m/b",
		"\n5 skipped: 2 by design, 3 for what this machine lacks\n" +
			"  by design: no reason given (1), sub skipped (1)\n" +
			"  missing (2): client (install it)\n" +
			"  missing (1): engine (error: second line); start one\n",
		"\n1 failed: TestFail (example.com/m/a)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"=== RUN", "not shown", "--- PASS", "--- SKIP"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}
}

// TestRunPassing checks a run without failures: exit status 0 and the skip count.
func TestRunPassing(t *testing.T) {
	module(t, map[string]string{"a/a_test.go": mixedTests})
	var out, errOut bytes.Buffer
	code := run([]string{"-count=1", "-run", "TestPass|TestSkipA", "./..."}, &out, &errOut)
	if code != 0 {
		t.Errorf("exit status %d, want 0\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.HasSuffix(out.String(), "\n1 skipped: 0 by design, 1 for what this machine lacks\n  missing (1): client (install it)\n") {
		t.Errorf("output does not end with the skip line:\n%s", out.String())
	}
}

// TestRunCrashAndBuildFailure checks that a test binary that panics and a package that does not
// compile both fail the run with their messages shown.
func TestRunCrashAndBuildFailure(t *testing.T) {
	module(t, map[string]string{
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestCrash(t *testing.T) { panic(\"kaboom\") }\n",
		"d/d_test.go": "package d\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefinedName() }\n",
	})
	var out, errOut bytes.Buffer
	code := run([]string{"-count=1", "./..."}, &out, &errOut)
	all := out.String() + errOut.String()
	if code == 0 {
		t.Errorf("exit status 0 for a crash and a build failure:\n%s", all)
	}
	for _, want := range []string{"panic: kaboom", "undefinedName", "TestCrash (example.com/m/c)", "\n1 did not build: example.com/m/d"} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%s", want, all)
		}
	}
}

// TestRunNoGo checks that a go command that cannot be started is reported, not hidden.
func TestRunNoGo(t *testing.T) {
	t.Setenv("GO", filepath.Join(t.TempDir(), "no-such-go"))
	var out, errOut bytes.Buffer
	if code := run([]string{"./..."}, &out, &errOut); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "testsummary: start") {
		t.Errorf("stderr = %q", errOut.String())
	}
}

func TestSkipReason(t *testing.T) {
	tests := map[string]struct {
		lines []string
		want  string
	}{
		"logged before the result": {[]string{"=== RUN   TestX\n", "    x_test.go:12: no client\n", "--- SKIP: TestX (0.00s)\n"}, "no client"},
		"logged after the result":  {[]string{"=== RUN   TestX\n", "--- SKIP: TestX (0.00s)\n", "    x_test.go:12: no client\n"}, "no client"},
		"last of several lines":    {[]string{"    x_test.go:3: setting up\n", "    x_test.go:9: docker not reachable\n"}, "docker not reachable"},
		"colon in the reason":      {[]string{"    x_test.go:9: tsql: not found\n"}, "tsql: not found"},
		"nothing logged":           {[]string{"=== RUN   TestX\n", "--- SKIP: TestX (0.00s)\n"}, "no reason given"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := skipReason(tt.lines); got != tt.want {
				t.Errorf("skipReason = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSkipLines checks the grouping of skip reasons: what this machine lacks ("missing: ")
// apart from the skips by design, each group by count.
func TestSkipLines(t *testing.T) {
	tests := map[string]struct {
		reasons []string
		want    []string
	}{
		"none": {nil, []string{"0 skipped"}},
		"by design only": {[]string{"helper process", "runs in full mode only", "runs in full mode only"},
			[]string{"3 skipped, all by design: runs in full mode only (2), helper process (1); nothing missing on this machine"}},
		"both": {[]string{"helper process", "missing: MSSQL_DSN not set (set it)", "missing: no Docker engine (start one)",
			"missing: no Docker engine (start one)", "helper process", "race-excluded"},
			[]string{
				"6 skipped: 3 by design, 3 for what this machine lacks",
				"  by design: helper process (2), race-excluded (1)",
				"  missing (2): no Docker engine (start one)",
				"  missing (1): MSSQL_DSN not set (set it)",
			}},
		"missing only": {[]string{"missing: tsql not installed (install freetds-bin)"},
			[]string{"1 skipped: 0 by design, 1 for what this machine lacks", "  missing (1): tsql not installed (install freetds-bin)"}},
		// The prefix counts only at the start: a reason that merely contains it is by design.
		"prefix inside": {[]string{"runs when missing: nothing"}, []string{"1 skipped, all by design: runs when missing: nothing (1); nothing missing on this machine"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := newSummary(io.Discard)
			for _, r := range tt.reasons {
				s.skip(r)
			}
			if got := s.skipLines(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("skipLines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
