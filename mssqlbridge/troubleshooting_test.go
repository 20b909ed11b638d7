package mssqlbridge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// troubleshootingPage is the page of connect and TLS failures, from this package's directory.
const troubleshootingPage = "../docs/troubleshooting.md"

// TestTroubleshootingPage checks docs/troubleshooting.md against the code: every row names at
// least one test, each exists in the file named (a func TestName, and every subtest name in a
// string literal of that file), every error a row says it matches without a package name is
// one of this package's, and every exported error of this package (a var Err... or a type
// ...Error in its non-test files) appears in the table.
func TestTroubleshootingPage(t *testing.T) {
	page, err := os.ReadFile(troubleshootingPage)
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(string(page))
	if len(rows) == 0 {
		t.Fatalf("%s: no table rows", troubleshootingPage)
	}
	ours := exportedErrors(t)
	testRef := regexp.MustCompile("`(Test[A-Za-z0-9_]+)(?:/([^`]+))?` \\(([A-Za-z0-9_./-]+_test\\.go)\\)")
	matchRef := regexp.MustCompile("`\\*?([A-Za-z_][A-Za-z0-9_.]*)`")
	sources := map[string]string{}
	for i, cells := range rows {
		if len(cells) != 6 {
			t.Errorf("row %d: %d cells, want 6 (phase, text, cause, fix, matches, test)", i+1, len(cells))
			continue
		}
		for _, m := range matchRef.FindAllStringSubmatch(cells[4], -1) {
			if name := m[1]; !strings.Contains(name, ".") && !slices.Contains(ours, name) {
				t.Errorf("row %d matches %s, which is not an exported error of this package", i+1, name)
			}
		}
		refs := testRef.FindAllStringSubmatch(cells[5], -1)
		if len(refs) == 0 {
			t.Errorf("row %d names no test: %q", i+1, cells[5])
		}
		for _, ref := range refs {
			name, sub, file := ref[1], ref[2], ref[3]
			src, ok := sources[file]
			if !ok {
				b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(file)))
				if err != nil {
					t.Errorf("row %d: %v", i+1, err)
				}
				src = string(b)
				sources[file] = src
			}
			if !strings.Contains(src, "func "+name+"(") {
				t.Errorf("row %d: no func %s( in %s", i+1, name, file)
			}
			for _, part := range strings.Split(sub, "/") {
				spaced := strings.ReplaceAll(part, "_", " ") // go test writes a subtest's spaces as _
				if part != "" && !strings.Contains(src, `"`+part+`"`) && !strings.Contains(src, `"`+spaced+`"`) {
					t.Errorf("row %d: no subtest %q of %s in %s", i+1, spaced, name, file)
				}
			}
		}
	}
	table := make([]string, len(rows))
	for i, cells := range rows {
		table[i] = strings.Join(cells, " | ")
	}
	all := strings.Join(table, "\n")
	for _, name := range ours {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(all) {
			t.Errorf("%s is not in the table of %s", name, troubleshootingPage)
		}
	}
}

// tableRows returns the cells of the body rows of the first Markdown table in page, trimmed.
func tableRows(page string) [][]string {
	var rows [][]string
	header := true
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 || !header {
				break // the end of the table
			}
			continue
		}
		if header || strings.HasPrefix(line, "|---") {
			header = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// exportedErrors returns the names of this package's exported error sentinels (package-level
// vars named Err...) and error types (types named ...Error), from its non-test files.
func exportedErrors(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					for _, id := range spec.Names {
						if gd.Tok == token.VAR && id.IsExported() && strings.HasPrefix(id.Name, "Err") {
							names = append(names, id.Name)
						}
					}
				case *ast.TypeSpec:
					if spec.Name.IsExported() && strings.HasSuffix(spec.Name.Name, "Error") {
						names = append(names, spec.Name.Name)
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no exported errors found: is the test running in the package's directory?")
	}
	slices.Sort(names)
	return names
}
