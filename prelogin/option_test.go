package prelogin

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// tokenConstants returns the Token constants declared in token.go, by value: the source, so
// that a constant added without a row of the option table (or a row without a constant) shows.
func tokenConstants(t *testing.T) map[Token]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "token.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[Token]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Token" {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: want a literal value", name.Name)
				}
				v, err := strconv.ParseUint(lit.Value, 0, 8)
				if err != nil {
					t.Fatalf("%s = %s: %v", name.Name, lit.Value, err)
				}
				if prev, dup := consts[Token(v)]; dup {
					t.Fatalf("%s and %s have the same value %#x", prev, name.Name, v)
				}
				consts[Token(v)] = name.Name
			}
		}
	}
	return consts
}

// TestOptionTable: the option table and the token constants agree (each constant but the
// terminator's is a row named as the constant, and each row has a constant), and each row has
// a name, a size that fits optionBuf, and a codec.
func TestOptionTable(t *testing.T) {
	consts := tokenConstants(t)
	if consts[TokenTerminator] != "TokenTerminator" || TokenTerminator.Known() {
		t.Fatalf("the terminator: constant %q, Known %v", consts[TokenTerminator], TokenTerminator.Known())
	}
	for v, name := range consts {
		if want := strings.ToUpper(strings.TrimPrefix(name, "Token")); v.String() != want {
			t.Errorf("%s (%#x): String() = %q, want %q", name, uint8(v), v.String(), want)
		}
		if v != TokenTerminator && !v.Known() {
			t.Errorf("%s (%#x) has no row in the option table", name, uint8(v))
		}
	}
	for v := range Token(len(options)) {
		row := options[v]
		if consts[v] == "" {
			t.Errorf("row %#x (%q) has no Token constant in token.go", uint8(v), row.name)
		}
		if row.name == "" {
			t.Errorf("row %#x is empty", uint8(v))
		}
		if !row.size.any && row.size.n > len(optionBuf{}) {
			t.Errorf("%v: size %d does not fit optionBuf (%d bytes)", v, row.size.n, len(optionBuf{}))
		}
		var m Message
		var b optionBuf
		if _, _, err := m.optionData(v, &b); err != nil {
			t.Errorf("%v: optionData: %v", v, err)
		}
		if err := m.setOption(v, make([]byte, row.size.n)); err != nil {
			t.Errorf("%v: setOption: %v", v, err)
		}
	}
	for v := range 256 {
		tok := Token(v)
		if tok.Known() != (consts[tok] != "" && tok != TokenTerminator) {
			t.Errorf("Token(%#x).Known() = %v", v, tok.Known())
		}
	}
}

// TestEveryOptionRoundTrip: a hand-built Message with every option of the table (and an
// unknown one) encodes to its fixture, decodes back to the same fields, and encodes again to
// the same bytes. A row added to the table without extending fullClientVectorMessage fails.
func TestEveryOptionRoundTrip(t *testing.T) {
	want := fullClientVectorMessage()
	for v := range Token(len(options)) {
		if !want.Has(v) {
			t.Fatalf("fullClientVectorMessage lacks %v", v)
		}
	}
	out, err := want.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, fullClientVector) {
		t.Fatalf("Encode =\n% x\nwant\n% x", out, fullClientVector)
	}
	var got Message
	if err := got.Decode(out); err != nil {
		t.Fatal(err)
	}
	for v := range Token(len(options)) {
		if !got.Has(v) {
			t.Fatalf("decoded Message lacks %v", v)
		}
	}
	// Every exported field, compared by value: Equal compares encodings, which a codec that
	// drops a field on both sides would pass.
	fields := func(m *Message) Message {
		c := *m
		c.order, c.buf = nil, nil
		return c
	}
	if g, w := fields(&got), fields(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("Decode(Encode(m)) =\n%+v\nwant\n%+v", g, w)
	}
	again, err := got.Encode(nil)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("Encode(Decode(Encode(m))) = % x, %v", again, err)
	}
}

// TestModeNames: every Mode constant has a name of its own; the value past the last is not
// valid.
func TestModeNames(t *testing.T) {
	seen := map[string]bool{}
	for m := range Mode(len(modeNames)) {
		name := m.String()
		if !m.Valid() || name == "" || seen[name] || strings.HasPrefix(name, "Mode(") {
			t.Errorf("Mode %d: name %q (valid %v)", m, name, m.Valid())
		}
		seen[name] = true
	}
	if m := Mode(len(modeNames)); m.Valid() {
		t.Errorf("Mode(%d) is valid", m)
	}
}
