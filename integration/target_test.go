package integration

import (
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// target is a server the suites run against.
type target struct {
	name string
	base string // a go-mssqldb DSN; dsn removes the parameters the suites set themselves
	// logs returns the server's log, for a test that failed against it; nil when the log is
	// the test's own (tdstest in this process logs through t.Logf) or out of reach (MSSQL_DSN).
	logs func() string
}

// suiteParams are the DSN parameters the suites set case by case (lower case, as go-mssqldb
// compares them). dsn removes them from the base DSN first, so that a TrustServerCertificate
// left in MSSQL_DSN cannot turn a case that verifies the certificate into one that trusts it.
var suiteParams = []string{"encrypt", "trustservercertificate", "certificate", "servercertificate", "hostnameincertificate", "packet size"}

// dsn returns the target's DSN with params ("key=value") set and every suite parameter of the
// base DSN removed. URL DSNs get query parameters, ADO DSNs ";key=value" pairs.
func (tg target) dsn(params ...string) string {
	if u, err := url.Parse(tg.base); err == nil && u.Scheme == "sqlserver" {
		q := u.Query()
		for k := range q {
			if slices.Contains(suiteParams, strings.ToLower(k)) {
				q.Del(k)
			}
		}
		for _, p := range params {
			k, v, _ := strings.Cut(p, "=")
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	var pairs []string
	for _, pair := range strings.Split(tg.base, ";") {
		k, _, _ := strings.Cut(pair, "=")
		if strings.TrimSpace(pair) == "" || slices.Contains(suiteParams, strings.ToLower(strings.TrimSpace(k))) {
			continue
		}
		pairs = append(pairs, pair)
	}
	return strings.Join(append(pairs, params...), ";")
}

// forEachTarget runs fn as a subtest for every target. A target that is not available here is
// a skipped subtest whose message says why and how to make it available, starting with
// "missing: " so that the skip lines of `make test` (scripts/testsummary) count it as something
// this machine lacks; a container target that an engine here should have started but did not is
// a failed subtest. A subtest that fails against a container ends with the container's log.
func forEachTarget(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			switch {
			case tg.missing != "":
				t.Skip("missing: " + tg.missing)
			case tg.broken != "":
				t.Fatal(tg.broken)
			}
			if tg.logs != nil {
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("log of %s:\n%s", tg.name, tg.logs())
					}
				})
			}
			fn(t, tg.target)
		})
	}
}

// listedTarget is a target with what keeps it from running, if anything.
type listedTarget struct {
	target
	missing string // why the target is not available here: a skip
	broken  string // why the target should be available but is not: a failure
}

// targets lists the suites' targets in order: tdstest in this process, MSSQL_DSN, then the
// container targets (container_test.go).
func targets(t *testing.T) []listedTarget {
	t.Helper()
	// A tdstest server per test keeps the goroutine accounting of each test its own.
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff, Logf: t.Logf})
	if err != nil {
		t.Fatalf("start tdstest server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	list := []listedTarget{{target: target{name: "tdstest", base: srv.DSN()}}}

	mssqlDSN := listedTarget{target: target{name: "MSSQL_DSN", base: os.Getenv("MSSQL_DSN")}}
	if mssqlDSN.base == "" {
		mssqlDSN.missing = "MSSQL_DSN not set: set it to a SQL Server's DSN to run the suites against that server too (docker-compose.yml starts one)"
	}
	list = append(list, mssqlDSN)
	return append(list, containerTargets()...)
}
