package modgraph

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// containerModules are parts of module paths that only container tooling has: testcontainers-go,
// the Docker client and engine API, and the container libraries they bring.
var containerModules = []string{"testcontainers", "docker", "moby", "containerd", "opencontainers"}

// userMain is the whole of the throwaway program: it imports mssqlbridge and nothing else.
const userMain = `package main

import _ "github.com/tdsbridge/tdsbridge/mssqlbridge"

func main() {}
`

// TestUserModuleGraph writes a module that requires this repository (by a replace directive)
// and imports only mssqlbridge, builds it offline (GOPROXY=off: every module must come from the
// module cache, which `go mod download` in the repository root fills), and checks that
// `go list -m all` there names no container module.
func TestUserModuleGraph(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(rootMod)
	if goLine == nil {
		t.Fatal("the repository's go.mod has no go directive")
	}
	rootSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/user\n\n" + string(goLine) + "\n\n" +
			"require github.com/tdsbridge/tdsbridge v0.0.0\n\n" +
			"replace github.com/tdsbridge/tdsbridge => " + root + "\n",
		// The repository's checksums cover every module its packages build with.
		"go.sum":  string(rootSum),
		"main.go": userMain,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			hint := ""
			if strings.Contains(stderr.String(), "GOPROXY=off") {
				hint = "\n(a module is missing from the module cache: run `go mod download` in the repository root)"
			}
			t.Fatalf("go %s in the throwaway module: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), hint)
		}
		return string(out)
	}
	run("build", "-o", os.DevNull, ".")
	modules := strings.Fields(run("list", "-m", "-f", "{{.Path}}", "all"))
	t.Logf("go list -m all in a module that imports only mssqlbridge: %d modules", len(modules))
	for _, m := range modules {
		for _, c := range containerModules {
			if strings.Contains(m, c) {
				t.Errorf("module %s is in the graph of a module that imports only mssqlbridge: "+
					"what only the integration suites need belongs in integration/go.mod, and `go mod tidy` in the root removes it", m)
			}
		}
	}
}
