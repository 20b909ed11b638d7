package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultsMode runs -mode faults as a user does (servers in a child process: this test binary
// re-executed), one counted query per idle cell, and checks the table and the JSON file.
func TestFaultsMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process and waits out deadlines for several seconds")
	}
	t.Parallel()
	jsonPath := filepath.Join(t.TempDir(), "faults.json")
	args := []string{"-mode", "faults", "-fault-repeat", "1", "-json", jsonPath}
	var out, errOut strings.Builder
	if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("run(%q) = %d\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errOut.String())
	}
	for _, sc := range faultScenarios() {
		if !strings.Contains(out.String(), sc.id+". "+sc.name) {
			t.Errorf("table lacks scenario %s:\n%s", sc.id, out.String())
		}
	}
	for _, want := range []string{"machine: ", "returned in", "queries/errors", "error (first line)", ": next query"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep faultReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if len(rep.Rows) != 30 || rep.Repeat != 1 || rep.CPUModel == "" {
		t.Errorf("JSON: %d rows, repeat %d, CPU %q; want 30 rows, repeat 1", len(rep.Rows), rep.Repeat, rep.CPUModel)
	}
	for _, r := range rep.Rows {
		if r.Queries < 1 || len(r.Times) != r.Queries || r.Bound <= 0 {
			t.Errorf("JSON row %+v: want calls with their times and a bound", r)
		}
	}
}
