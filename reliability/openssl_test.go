package reliability

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/testcert"
	"github.com/tdsbridge/tdsbridge/mssqlbridge" // registers the "tdsbridge" driver (and go-mssqldb's "sqlserver")
)

// The OpenSSL server: a TDS server of this project whose TLS is OpenSSL (pyOpenSSL over memory
// BIOs), run by Debian's python3 with python3-openssl. testdata/openssl/README.md says what it
// does; each test below starts one process and connects to it through database/sql, first with
// the bridge (driver "tdsbridge"), which must succeed, then with go-mssqldb's own transport
// (driver "sqlserver"), whose result is only logged: where it fails, the line says why.
const (
	opensslPython = "/usr/bin/python3"
	opensslScript = "testdata/openssl/tds_openssl_server.py"
	// opensslRequireEnv turns a missing python3 or pyOpenSSL into a failure, as in
	// tdstest/clients_test.go (CI sets it).
	opensslRequireEnv = "TDSBRIDGE_REQUIRE_CLIENTS"
	// opensslWait bounds every wait for the server: its start, an event, a query.
	opensslWait = 10 * time.Second
)

// opensslMissing skips the test with a message starting "missing:" (counted by `make test`'s
// skip summary), or fails it when opensslRequireEnv is 1.
func opensslMissing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(opensslRequireEnv) == "1" {
		t.Fatalf("%s=1 and "+format, append([]any{opensslRequireEnv}, args...)...)
	}
	t.Skipf("missing: "+format+"; `bash .ci/run` installs every client", args...)
}

// opensslFiles are the PEM files the server and the DSNs use: a CA, and a server chain and key
// it issued for 127.0.0.1 (bigChain and bigKey: the same with a leaf of over 4 KiB, so that the
// server's TLS 1.2 flight is longer than one 4096-byte packet).
type opensslFiles struct{ ca, chain, key, bigChain, bigKey string }

// opensslBigLeaf is the number of extra DNS names in the big leaf (about 30 bytes each).
const opensslBigLeaf = 150

var (
	opensslOnce     sync.Once
	opensslPEM      [5][]byte // the files of opensslFiles, in its order
	opensslPEMError error
)

// opensslSetup checks for python3 and pyOpenSSL (skipping or failing, see opensslMissing) and
// writes the certificate files into a temporary directory of t.
func opensslSetup(t *testing.T) opensslFiles {
	t.Helper()
	if _, err := os.Stat(opensslPython); err != nil {
		opensslMissing(t, "%s not installed (Debian package python3): %v", opensslPython, err)
	}
	if out, err := exec.Command(opensslPython, "-c", "import OpenSSL.SSL").CombinedOutput(); err != nil {
		opensslMissing(t, "pyOpenSSL not importable by %s (Debian package python3-openssl): %v: %s", opensslPython, err, out)
	}
	opensslOnce.Do(func() { opensslPEM, opensslPEMError = opensslCertificates() })
	if opensslPEMError != nil {
		t.Fatalf("certificates: %v", opensslPEMError)
	}
	dir := t.TempDir()
	var f opensslFiles
	names := [...]string{"ca.pem", "chain.pem", "key.pem", "big-chain.pem", "big-key.pem"}
	for i, p := range []*string{&f.ca, &f.chain, &f.key, &f.bigChain, &f.bigKey} {
		*p = filepath.Join(dir, names[i])
		if err := os.WriteFile(*p, opensslPEM[i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// opensslCertificates makes the PEM contents of opensslFiles.
func opensslCertificates() (files [5][]byte, err error) {
	ca, err := testcert.NewCA("openssl test CA")
	if err != nil {
		return files, err
	}
	files[0] = ca.PEM()
	for i, extra := range []int{0, opensslBigLeaf} {
		leaf, err := ca.Issue(testcert.LeafOptions{ExtraNames: extra})
		if err != nil {
			return files, err
		}
		key, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
		if err != nil {
			return files, err
		}
		var chain []byte
		for _, der := range leaf.Certificate {
			chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
		}
		files[1+2*i], files[2+2*i] = chain, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})
	}
	return files, nil
}

// opensslServer is one running server process and the events it printed.
type opensslServer struct {
	port   int
	stderr bytes.Buffer // written by exec's copying goroutine until Wait returns

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced when a line arrives or stdout ends
	ended   bool
}

// startOpenSSL starts the server with args and returns once it printed its port. Cleanup
// closes its stdin (the server exits), kills it if it has not exited within opensslWait, and
// logs its events and stderr when the test failed.
func startOpenSSL(t *testing.T, f opensslFiles, args ...string) *opensslServer {
	t.Helper()
	script, err := filepath.Abs(opensslScript)
	if err != nil {
		t.Fatal(err)
	}
	s := &opensslServer{changed: make(chan struct{})}
	argv := append([]string{script, "--cert", f.chain, "--key", f.key, "--lifetime", "120"}, args...)
	cmd := exec.Command(opensslPython, argv...)
	cmd.Stderr = &s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", script, err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.read(stdout)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-readDone:
		case <-time.After(opensslWait):
			_ = cmd.Process.Kill()
			<-readDone
		}
		err := cmd.Wait()
		if t.Failed() || err != nil {
			t.Logf("OpenSSL server %v: exit %v\nevents:\n%s\nstderr:\n%s", args, err, strings.Join(s.snapshot(), "\n"), s.stderr.String())
		}
	})
	line, ok := s.wait(0, func(l string) bool { return strings.HasPrefix(l, "port ") })
	if !ok {
		t.Fatalf("OpenSSL server %v printed no port within %v", args, opensslWait)
	}
	if s.port, err = strconv.Atoi(strings.TrimPrefix(line, "port ")); err != nil {
		t.Fatalf("OpenSSL server: %q: %v", line, err)
	}
	return s
}

// read collects stdout's lines until EOF.
func (s *opensslServer) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s.mu.Lock()
		s.lines = append(s.lines, sc.Text())
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.ended = true
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *opensslServer) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// wait returns the first line from index from on that match accepts, waiting up to
// opensslWait for it; ok is false when none came.
func (s *opensslServer) wait(from int, match func(string) bool) (line string, ok bool) {
	deadline := time.NewTimer(opensslWait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		lines, changed, ended := s.lines, s.changed, s.ended
		s.mu.Unlock()
		for i := from; i < len(lines); i++ {
			if match(lines[i]) {
				return lines[i], true
			}
		}
		if ended {
			return "", false
		}
		from = max(from, len(lines))
		select {
		case <-changed:
		case <-deadline.C:
			return "", false
		}
	}
}

// events returns the events of one kind ("login", "closed", ...) for the application name app,
// each as its key=value fields.
func (s *opensslServer) events(kind, app string) []map[string]string {
	var out []map[string]string
	for _, l := range s.snapshot() {
		if f := eventFields(l); strings.HasPrefix(l, kind+" ") && f["app"] == app {
			out = append(out, f)
		}
	}
	return out
}

// waitEvent waits for the first event of kind for app whose fields also have the values of
// where (key, value, key, value, ...) and returns its fields.
func (s *opensslServer) waitEvent(t *testing.T, kind, app string, where ...string) map[string]string {
	t.Helper()
	line, ok := s.wait(0, func(l string) bool {
		f := eventFields(l)
		for i := 0; i+1 < len(where); i += 2 {
			if f[where[i]] != where[i+1] {
				return false
			}
		}
		return strings.HasPrefix(l, kind+" ") && f["app"] == app
	})
	if !ok {
		t.Fatalf("no %q event for app %s %v within %v; events:\n%s", kind, app, where, opensslWait, strings.Join(s.snapshot(), "\n"))
	}
	return eventFields(line)
}

// waitCount waits until the server printed at least n events of kind for app.
func (s *opensslServer) waitCount(t *testing.T, kind, app string, n int) {
	t.Helper()
	seen := 0 // wait calls the match function once per line, in order
	if _, ok := s.wait(0, func(l string) bool {
		if strings.HasPrefix(l, kind+" ") && eventFields(l)["app"] == app {
			seen++
		}
		return seen >= n
	}); !ok {
		t.Fatalf("%d %q events for app %s within %v, want %d; events:\n%s", seen, kind, app, opensslWait, n, strings.Join(s.snapshot(), "\n"))
	}
}

// eventFields splits an event line's key=value words.
func eventFields(line string) map[string]string {
	f := map[string]string{}
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok {
			f[k] = v
		}
	}
	return f
}

// dsn returns a DSN for the server with encrypt=mode, the CA file, app as the application name
// (the events name it) and extra parameters.
func (s *opensslServer) dsn(f opensslFiles, mode, app string, extra url.Values) string {
	q := url.Values{"encrypt": {mode}, "certificate": {f.ca}, "app name": {app}, "dial timeout": {"5"}}
	for k, v := range extra {
		q[k] = v
	}
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword("sa", "pw"), Host: "127.0.0.1:" + strconv.Itoa(s.port), RawQuery: q.Encode()}
	return u.String()
}

// openSQL opens a *sql.DB with driver ("tdsbridge" or "sqlserver"), closed at the end of t.
func openSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", driver, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// selectOne runs SELECT 1 and checks it returns 1.
func selectOne(db *sql.DB) error {
	ctx, cancel := context.WithTimeout(context.Background(), opensslWait)
	defer cancel()
	var v int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&v); err != nil {
		return err
	}
	if v != 1 {
		return fmt.Errorf("SELECT 1 returned %d", v)
	}
	return nil
}

// opensslMode is what the server must report at login for an encrypt= value: the negotiated
// mode, the TLS version and the ALPN protocol. With its default setting (ENCRYPTION=OFF) the
// server answers a client's OFF with OFF (login-only); with setting ON, with REQ (full).
func opensslMode(mode string, tls13, serverOn bool) map[string]string {
	v := "TLSv1.2"
	if tls13 {
		v = "TLSv1.3"
	}
	switch mode {
	case "disable":
		return map[string]string{"mode": "none", "tls": "-", "alpn": "-"}
	case "false":
		if serverOn {
			return map[string]string{"mode": "full", "tls": v, "alpn": "-"}
		}
		return map[string]string{"mode": "login-only", "tls": "TLSv1.2", "alpn": "-"}
	case "true":
		return map[string]string{"mode": "full", "tls": v, "alpn": "-"}
	case "strict":
		return map[string]string{"mode": "strict", "tls": "TLSv1.3", "alpn": "tds/8.0"}
	}
	panic("unknown encrypt value " + mode)
}

// checkFields fails t unless every field of want has that value in got.
func checkFields(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s=%q, want %q (event %v)", what, k, got[k], v, got)
		}
	}
}

// flightCounts parses the login event's flights field: flights, records, packets and messages
// the server sent inside PRELOGIN.
func flightCounts(t *testing.T, f map[string]string) (flights, records, packets, messages int) {
	t.Helper()
	var n [4]int
	parts := strings.Split(f["flights"], "/")
	if len(parts) != 4 {
		t.Fatalf("login event: flights=%q", f["flights"])
	}
	for i, p := range parts {
		var err error
		if n[i], err = strconv.Atoi(p); err != nil {
			t.Fatalf("login event: flights=%q: %v", f["flights"], err)
		}
	}
	return n[0], n[1], n[2], n[3]
}

// opensslVariant is one server configuration and the encrypt= values run against it.
type opensslVariant struct {
	name     string
	args     []string   // server flags
	modes    []string   // encrypt= values
	dsn      url.Values // extra DSN parameters
	tls13    bool       // TLS 1.3 inside PRELOGIN too (tlsmin=1.3)
	serverOn bool       // the server's setting is ENCRYPTION=ON (--encryption on)
	bigCert  bool       // the server uses the big leaf (opensslFiles.bigChain)
	// check looks at the server's login event of a bridged connection (TDS 7.x TLS modes only
	// for the flight checks).
	check func(t *testing.T, mode string, login map[string]string)
}

// checkFlights returns a check of the flight framing: want gets the counts.
func checkFlights(want func(flights, records, packets, messages int) error) func(*testing.T, string, map[string]string) {
	return func(t *testing.T, mode string, login map[string]string) {
		if mode == "disable" || mode == "strict" {
			return // no TLS inside PRELOGIN
		}
		fl, rec, pk, msg := flightCounts(t, login)
		if err := want(fl, rec, pk, msg); err != nil {
			t.Errorf("flights=%s (flights/records/packets/messages): %v", login["flights"], err)
		}
	}
}

// checkTickets checks that the server sent TLS 1.3 session tickets after the handshake, how.
func checkTickets(how string) func(*testing.T, string, map[string]string) {
	return func(t *testing.T, mode string, login map[string]string) {
		n, got, _ := strings.Cut(login["tickets"], "/")
		if c, err := strconv.Atoi(n); err != nil || c < 1 || got != how {
			t.Errorf("tickets=%q, want at least one record sent %s", login["tickets"], how)
		}
	}
}

var opensslVariants = []opensslVariant{
	{
		// A TLS 1.2 flight fits one 4096-byte packet here (ECDSA chain of two certificates).
		name: "flight-one-packet", args: []string{"--flight", "one"},
		modes: []string{"disable", "false", "true", "strict"},
		check: checkFlights(func(fl, rec, pk, msg int) error {
			if fl != 2 || pk != fl || msg != fl || rec <= fl {
				return errors.New("want two flights of several records, one packet each")
			}
			return nil
		}),
	},
	{
		// The same server with packet size=512 in the DSN: its handshake packets are longer than
		// the requested size. go-mssqldb's own transport applies the size to its reader before
		// the handshake and fails ("invalid packet size"); the bridge does not depend on it.
		name: "flight-one-packet-size-512", args: []string{"--flight", "one"},
		modes: []string{"false", "true"}, dsn: url.Values{"packet size": {"512"}},
		check: func(t *testing.T, mode string, login map[string]string) {
			if login["packetsize"] != "512" {
				t.Errorf("packetsize=%s, want 512", login["packetsize"])
			}
		},
	},
	{
		name: "flight-512-byte-packets", args: []string{"--flight", "512"},
		modes: []string{"false", "true"}, dsn: url.Values{"packet size": {"512"}},
		check: checkFlights(func(fl, rec, pk, msg int) error {
			if msg != fl || pk <= fl {
				return errors.New("want one message per flight, at least one of several packets")
			}
			return nil
		}),
	},
	{
		name: "flight-packet-per-record", args: []string{"--flight", "record"},
		modes: []string{"false", "true"},
		check: checkFlights(func(fl, rec, pk, msg int) error {
			if pk != rec || msg != fl || rec <= fl {
				return errors.New("want one packet per record, one message per flight")
			}
			return nil
		}),
	},
	{
		name: "flight-message-per-record", args: []string{"--flight", "messages"},
		modes: []string{"false", "true"},
		check: checkFlights(func(fl, rec, pk, msg int) error {
			if msg != rec || pk != rec || rec <= fl {
				return errors.New("want one message per record")
			}
			return nil
		}),
	},
	{
		// A flight framed as a TDS server over OpenSSL's socket BIO frames it (Babelfish): one
		// PRELOGIN message, of one packet, per write leaving OpenSSL's 4096-byte handshake write
		// buffer. With a leaf of over 4 KiB the first is a packet of 4104 bytes, over the 4096
		// MS-TDS allows before the packet size is negotiated. go-mssqldb's own transport refuses
		// it unless the DSN's packet size is at least that ("invalid packet size").
		name: "flight-openssl-write-buffer", args: []string{"--flight", "openssl-buffer"},
		modes: []string{"false", "true"}, bigCert: true,
		check: func(t *testing.T, mode string, login map[string]string) {
			if n, err := strconv.Atoi(login["maxpacket"]); err != nil || n <= 4096 {
				t.Errorf("maxpacket=%q, want a handshake packet longer than 4096 bytes", login["maxpacket"])
			}
			if fl, _, pk, msg := flightCounts(t, login); msg <= fl || pk != msg {
				t.Errorf("flights=%s (flights/records/packets/messages), want a flight of several messages, one packet each", login["flights"])
			}
		},
	},
	{
		// Setting ON: a client's OFF gets REQ, full encryption.
		name: "server-encryption-on", args: []string{"--encryption", "on"},
		modes: []string{"false", "true"}, serverOn: true,
	},
	{
		// TDS 8.0: OpenSSL sends its session tickets once it has read the client's Finished.
		name: "strict-tickets-at-once", args: []string{"--tickets", "at-once"},
		modes: []string{"strict"}, check: checkTickets("at-once"),
	},
	{
		// The tickets held back and written in front of the PRELOGIN reply, in one socket write.
		name: "strict-tickets-with-prelogin-reply", args: []string{"--tickets", "with-reply"},
		modes: []string{"strict"}, check: checkTickets("with-reply"),
	},
	{
		// TLS 1.3 inside PRELOGIN (tlsmin=1.3): the tickets arrive as raw records after the
		// client switched to passthrough.
		name: "tls13-in-prelogin-tickets", args: []string{"--prelogin-tls", "1.3"},
		modes: []string{"true"}, dsn: url.Values{"tlsmin": {"1.3"}}, tls13: true,
		check: checkTickets("at-once"),
	},
}

// TestOpenSSLServer runs SELECT 1 through the bridge against each server variant in each
// encrypt mode that applies, and checks from the server's side that the mode, TLS version and
// framing were the ones meant.
func TestOpenSSLServer(t *testing.T) {
	f := opensslSetup(t)
	for _, v := range opensslVariants {
		t.Run(v.name, func(t *testing.T) {
			files := f
			if v.bigCert {
				files.chain, files.key = f.bigChain, f.bigKey
			}
			s := startOpenSSL(t, files, v.args...)
			for _, mode := range v.modes {
				t.Run(mode, func(t *testing.T) {
					app := "bridge-" + mode
					if err := selectOne(openSQL(t, "tdsbridge", s.dsn(f, mode, app, v.dsn))); err != nil {
						t.Fatalf("bridge: SELECT 1: %v", err)
					}
					login := s.waitEvent(t, "login", app)
					want := opensslMode(mode, v.tls13, v.serverOn)
					want["password"] = "ok"
					checkFields(t, "login", login, want)
					if v.check != nil {
						v.check(t, mode, login)
					}
					native := selectOne(openSQL(t, "sqlserver", s.dsn(f, mode, "native-"+mode, v.dsn)))
					t.Logf("go-mssqldb's own transport: %s", result(native))
				})
			}
		})
	}
}

// TestOpenSSLKeyUpdate: the server sends a TLS 1.3 KeyUpdate (update requested) before each
// answer after the first; three SELECT 1 on one connection must all succeed.
func TestOpenSSLKeyUpdate(t *testing.T) {
	f := opensslSetup(t)
	cases := []struct {
		name, mode string
		args       []string
		dsn        url.Values
	}{
		{"strict", "strict", nil, nil},
		{"tls13-in-prelogin", "true", []string{"--prelogin-tls", "1.3"}, url.Values{"tlsmin": {"1.3"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startOpenSSL(t, f, append([]string{"--key-update"}, c.args...)...)
			run := func(driver, app string) error {
				db := openSQL(t, driver, s.dsn(f, c.mode, app, c.dsn))
				db.SetMaxOpenConns(1)
				for i := range 3 {
					if err := selectOne(db); err != nil {
						return fmt.Errorf("SELECT 1 number %d: %w", i+1, err)
					}
				}
				return nil
			}
			if err := run("tdsbridge", "bridge"); err != nil {
				t.Fatalf("bridge: %v", err)
			}
			s.waitEvent(t, "batch", "bridge", "n", "3")
			if n := len(s.events("keyupdate", "bridge")); n != 2 {
				t.Errorf("server sent %d KeyUpdates, want 2", n)
			}
			if n := len(s.events("login", "bridge")); n != 1 {
				t.Errorf("%d logins, want 1 (all three queries on one connection)", n)
			}
			t.Logf("go-mssqldb's own transport: %s", result(run("sqlserver", "native")))
		})
	}
}

// TestOpenSSLIdleClose: after answering a batch the server waits 200 ms and closes the idle
// connection: close_notify then FIN (a bare FIN when no TLS runs after login), or a TLS 1.3
// session ticket then FIN. The next SELECT 1 on the same *sql.DB must succeed: the bridge finds
// the pooled connection dead before sending, and database/sql retries on a new one. A TLS
// record unread in front of the FIN (the alert, the ticket) must not hide the close
// (mssqlbridge/deadconn.go).
func TestOpenSSLIdleClose(t *testing.T) {
	f := opensslSetup(t)
	cases := []struct {
		name  string
		args  []string
		modes []string
		dsn   url.Values
		kind  func(mode string) string // the close the server reports
	}{
		{
			name: "close-notify-then-fin", args: []string{"--close", "notify"},
			modes: []string{"disable", "false", "true", "strict"},
			kind: func(mode string) string {
				if mode == "disable" || mode == "false" {
					return "fin"
				}
				return "notify"
			},
		},
		{
			name: "ticket-then-fin", args: []string{"--close", "ticket"},
			modes: []string{"strict"}, kind: func(string) string { return "ticket" },
		},
		{
			name: "ticket-then-fin-tls13-in-prelogin", args: []string{"--close", "ticket", "--prelogin-tls", "1.3"},
			modes: []string{"true"}, dsn: url.Values{"tlsmin": {"1.3"}}, kind: func(string) string { return "ticket" },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startOpenSSL(t, f, append([]string{"--idle-close", "200"}, c.args...)...)
			for _, mode := range c.modes {
				t.Run(mode, func(t *testing.T) {
					run := func(driver, app string) error {
						db := openSQL(t, driver, s.dsn(f, mode, app, c.dsn))
						if err := selectOne(db); err != nil {
							return fmt.Errorf("first SELECT 1: %w", err)
						}
						closed := s.waitEvent(t, "closed", app)
						if closed["kind"] != c.kind(mode) {
							t.Errorf("server closed with %s, want %s", closed["kind"], c.kind(mode))
						}
						if err := selectOne(db); err != nil {
							return fmt.Errorf("SELECT 1 after the server's idle close: %w", err)
						}
						return nil
					}
					if err := run("tdsbridge", "bridge-"+mode); err != nil {
						t.Errorf("bridge: %v", err)
					} else {
						// Each connection prints its login before its first batch.
						s.waitCount(t, "batch", "bridge-"+mode, 2)
						if n := len(s.events("login", "bridge-"+mode)); n != 2 {
							t.Errorf("%d logins, want 2 (the second query on a new connection)", n)
						}
					}
					t.Logf("go-mssqldb's own transport: %s", result(run("sqlserver", "native-"+mode)))
				})
			}
		})
	}
}

// TestOpenSSLRefusals: the negotiation table's refusals against a server written elsewhere. The
// server replies and closes; the bridge names what the server answered.
func TestOpenSSLRefusals(t *testing.T) {
	f := opensslSetup(t)
	cases := []struct {
		setting, mode string
		want          error
	}{
		{"on", "disable", mssqlbridge.ErrServerRequiresEncryption}, // NOT_SUP answered with REQ
		{"notsup", "true", mssqlbridge.ErrServerNoEncryption},      // ON answered with NOT_SUP
		{"notsup", "false", nil},                                   // OFF answered with NOT_SUP: no encryption
	}
	for _, c := range cases {
		t.Run(c.setting+"/"+c.mode, func(t *testing.T) {
			s := startOpenSSL(t, f, "--encryption", c.setting)
			err := selectOne(openSQL(t, "tdsbridge", s.dsn(f, c.mode, "bridge", nil)))
			if !errors.Is(err, c.want) {
				t.Fatalf("bridge: SELECT 1: got %v, want %v", err, c.want)
			}
			t.Logf("bridge: %s", result(err))
			if c.want == nil {
				checkFields(t, "login", s.waitEvent(t, "login", "bridge"), map[string]string{"mode": "none", "tls": "-"})
			}
			t.Logf("go-mssqldb's own transport: %s", result(selectOne(openSQL(t, "sqlserver", s.dsn(f, c.mode, "native", nil)))))
		})
	}
}

// result formats an error for the log: "ok" or the error.
func result(err error) string {
	if err == nil {
		return "ok"
	}
	return "failed: " + err.Error()
}
