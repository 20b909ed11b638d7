package tdstest

import (
	"os"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// TestSysItemsDoc: doc.go's list of system variables and functions is the registry's, line for
// line, and the error text and supportedHelp name every entry.
func TestSysItemsDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	section := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(line, "// # "):
			section = line == "// # System variables and functions"
		case section && strings.HasPrefix(line, "//   - "):
			got = append(got, strings.TrimPrefix(line, "//   - "))
		}
	}
	var want []string
	for i := range sysItems {
		want = append(want, sysItems[i].docLine())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("doc.go's list under \"# System variables and functions\" differs from sysItems; it should read:\n//   - %s",
			strings.Join(want, "\n//   - "))
	}
	for _, it := range sysItems {
		if !strings.Contains(supportedHelp, it.name) {
			t.Errorf("supportedHelp lacks %s", it.name)
		}
		if strings.HasPrefix(it.name, "@@") != strings.Contains(unknownSysVar, it.name) {
			t.Errorf("the unknown @@ variable error and %s disagree: %q", it.name, unknownSysVar)
		}
	}
}

// TestSysItems: every entry parses as a select-list item, by its name in lower case too, and
// gives a value of its column's type from the session; unknown names are refused.
func TestSysItems(t *testing.T) {
	sess := session{spid: 60, database: "db", user: "u", host: "h", app: "a", tranCount: 2, tranID: 9, rowCount: 5, lastError: 208}
	for _, it := range sysItems {
		t.Run(it.name, func(t *testing.T) {
			if (it.num == nil) == (it.text == nil) {
				t.Fatal("want exactly one of num and text")
			}
			if isInt := it.ti.Type.fixedSize() > 0; isInt != (it.num != nil) || !isInt && it.ti.Type != dtNVarChar {
				t.Fatalf("type %s with num %v", it.ti.decl(), it.num != nil)
			}
			for _, name := range []string{it.name, strings.ToLower(it.name)} {
				st, err := parseBatch("SELECT " + name + " AS x")
				if err != nil {
					t.Fatal(err)
				}
				v := st[0].vals[0].resolve(&sess)
				if v.col.Name != "x" || *v.col.TI != it.ti || v.col.NotNull != it.notNull {
					t.Fatalf("column %+v %+v, want %s", v.col, *v.col.TI, it.ti.decl())
				}
				if want := it.eval(&sess); string(v.sv.Data) != string(want.Data) || v.sv.Len != int64(len(want.Data)) {
					t.Fatalf("value %x, want %x", v.sv.Data, want.Data)
				}
			}
		})
	}
	for _, bad := range []string{"SELECT @@NOSUCH", "SELECT [@@SPID]", "SELECT [DB_NAME()]", "SELECT DB_NAME", "SELECT SYSTEM_USER()"} {
		if _, err := parseBatch(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSysItemsValues: values computed from the session, as SQL Server gives them.
func TestSysItemsValues(t *testing.T) {
	sess := session{spid: 60, database: "db", user: "u", host: "h", app: "a", tranCount: 2, tranID: 9, rowCount: 5, lastError: 208}
	tests := map[string]struct {
		num  int64
		text string
	}{
		"@@SPID": {num: 60}, "@@TRANCOUNT": {num: 2}, "@@ROWCOUNT": {num: 5}, "@@ERROR": {num: 208},
		"@@MAX_PRECISION": {num: 38}, "@@LOCK_TIMEOUT": {num: -1}, "@@MICROSOFTVERSION": {num: 0x100003E8},
		"DB_NAME()": {text: "db"}, "SUSER_SNAME()": {text: "u"}, "SYSTEM_USER": {text: "u"}, "HOST_NAME()": {text: "h"},
		"APP_NAME()": {text: "a"}, "CURRENT_USER": {text: "dbo"}, "@@SERVERNAME": {text: "TDSTEST"},
	}
	for name, tc := range tests {
		it := lookupSys(name)
		if it == nil {
			t.Errorf("%s not in the registry", name)
			continue
		}
		v := it.eval(&sess)
		if it.num != nil && leInt(v.Data) != tc.num || it.text != nil && ucs2.Decode(v.Data) != tc.text {
			t.Errorf("%s = %x, want %d / %q", name, v.Data, tc.num, tc.text)
		}
	}
}
