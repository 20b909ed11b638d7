package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // the native "sqlserver" driver, for parity checks

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// rewriteReply returns a Tamper that sets the ENCRYPTION option of the server's first message
// (the PRELOGIN reply, in clear) to e: a man in the middle stripping encryption.
func rewriteReply(t *testing.T, e prelogin.Encryption) wiretest.Tamper {
	return func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir == wiretest.ServerToClient && u.Index == 0 && u.Kind == wiretest.UnitTDS {
			if _, err := prelogin.SetEncryption(u.Bytes[tds.HeaderSize:], e); err != nil {
				t.Errorf("proxy: cannot patch the PRELOGIN reply: %v", err)
			}
		}
		return wiretest.Verdict{Send: u.Bytes}
	}
}

// impersonate returns a Tamper for strict (TDS 8.0) connections: it answers the client's first
// unit (the TLS ClientHello) itself with a plaintext PRELOGIN reply carrying e, as a server
// without TDS 8.0 (or an attacker posing as one) would, and drops the ClientHello.
func impersonate(e prelogin.Encryption) wiretest.Tamper {
	return func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir == wiretest.ClientToServer && u.Index == 0 {
			return wiretest.Verdict{Back: wiretest.PreloginReply(e)}
		}
		return wiretest.Verdict{Send: u.Bytes}
	}
}

// assertNoLoginInClear fails the test if the client's recorded bytes hold a LOGIN7 packet
// outside TLS or the password in either form.
func assertNoLoginInClear(t *testing.T, s *wiretest.Session, password string) {
	t.Helper()
	if types := s.ClearTDSTypes(wiretest.ClientToServer); bytes.IndexByte(types, byte(tds.TypeLogin7)) >= 0 {
		t.Errorf("a LOGIN7 packet crossed in the clear (client packet types in clear: % x)", types)
	}
	if wiretest.ContainsPassword(s.Sent(wiretest.ClientToServer), password) {
		t.Errorf("the password crossed in the clear (plain UTF-16LE or obfuscated)")
	}
}

// waitSessions waits until every session of p has ended, so that the recording is complete.
func waitSessions(t *testing.T, p *wiretest.Proxy) []*wiretest.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	ss := p.Sessions()
	for _, s := range ss {
		if err := s.Wait(ctx); err != nil {
			t.Fatalf("proxy session still running: %v", err)
		}
	}
	return ss
}

// TestDowngradeRefused: encrypt=true and encrypt=strict against a man in the middle that strips
// encryption are refused with ErrServerNoEncryption (or a TLS error in strict mode), and the
// recording proves that no LOGIN7 packet and no password byte crossed in the clear. The
// control case (encrypt=false, which accepts no encryption by design) shows that the recorder
// does see a password that crosses in the clear.
func TestDowngradeRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		server   tdstest.Config
		encrypt  string
		tamper   func(t *testing.T) wiretest.Tamper
		is       []error
		msgs     []string
		control  bool // the client accepts the downgrade: the recording must show the password
		serverNS bool // the server itself replies NOT_SUP (tdstest Faults.ReplyNotSup)
	}{
		{
			name: "encrypt-true-proxy-NOT_SUP", encrypt: "true",
			tamper: func(t *testing.T) wiretest.Tamper { return rewriteReply(t, prelogin.EncryptNotSup) },
			is:     []error{mssqlbridge.ErrServerNoEncryption, prelogin.ErrServerNoEncryption},
			msgs:   []string{"does not support encryption"},
		},
		{
			name: "encrypt-true-proxy-OFF", encrypt: "true",
			tamper: func(t *testing.T) wiretest.Tamper { return rewriteReply(t, prelogin.EncryptOff) },
			is:     []error{mssqlbridge.ErrServerNoEncryption},
		},
		{
			name: "encrypt-true-server-NOT_SUP", encrypt: "true",
			server: tdstest.Config{Faults: tdstest.Faults{ReplyNotSup: true}},
			is:     []error{mssqlbridge.ErrServerNoEncryption},
		},
		{
			name: "strict-proxy-NOT_SUP", encrypt: "strict", server: tdstest.Config{Encryption: tdstest.EncryptStrict},
			tamper: func(*testing.T) wiretest.Tamper { return impersonate(prelogin.EncryptNotSup) },
			msgs:   []string{"tls: first record does not look like a TLS handshake"},
		},
		{
			name: "strict-proxy-OFF", encrypt: "strict", server: tdstest.Config{Encryption: tdstest.EncryptStrict},
			tamper: func(*testing.T) wiretest.Tamper { return impersonate(prelogin.EncryptOff) },
			msgs:   []string{"tls: first record does not look like a TLS handshake"},
		},
		{
			name: "control-encrypt-false-proxy-NOT_SUP", encrypt: "false",
			tamper:  func(t *testing.T) wiretest.Tamper { return rewriteReply(t, prelogin.EncryptNotSup) },
			control: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startTDS(t, tt.server)
			var tamper wiretest.Tamper
			if tt.tamper != nil {
				tamper = tt.tamper(t)
			}
			p := proxy(t, s.Addr, tamper)
			db := openBridged(t, s.DSN("encrypt="+tt.encrypt, "certificate="+s.CAFile()), mssqlbridge.WithDialer(p))
			err := within(t, "ping", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), hangBound)
				defer cancel()
				return connectAndQuery(ctx, db, "SELECT 1")
			})
			_ = db.Close()
			ss := waitSessions(t, p)
			if len(ss) == 0 {
				t.Fatal("no connection went through the proxy")
			}
			pw := s.Config.Password
			if pw == "" {
				pw = tdstest.DefaultPassword
			}
			if tt.control {
				// The client goes on in clear; the server, which expects TLS, hangs up after
				// the LOGIN7 packet: only the recording matters here.
				t.Logf("control: %v", err)
				if !wiretest.ContainsPassword(ss[0].Sent(wiretest.ClientToServer), pw) ||
					bytes.IndexByte(ss[0].ClearTDSTypes(wiretest.ClientToServer), byte(tds.TypeLogin7)) < 0 {
					t.Fatal("control: the recording does not show the LOGIN7 packet and password sent in clear")
				}
				return
			}
			t.Logf("error: %v", err)
			checkErr(t, err, tt.is, tt.msgs...)
			for _, sess := range ss {
				assertNoLoginInClear(t, sess, pw)
			}
		})
	}
}

// TestLoginNeverInClear: in login-only, full and strict modes the recorded client bytes hold
// neither a LOGIN7 packet in clear nor the password; login-only mode must still send the
// queries in clear (which proves the mode really was login-only), full mode must not.
func TestLoginNeverInClear(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		server    tdstest.Config
		encrypt   string
		wantClear bool // SQL batches cross in clear (login-only)
	}{
		{"login-only", tdstest.Config{Encryption: tdstest.EncryptOff}, "false", true},
		{"full", tdstest.Config{}, "true", false},
		{"full-server-requires", tdstest.Config{}, "false", false},
		{"strict", tdstest.Config{Encryption: tdstest.EncryptStrict}, "strict", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startTDS(t, tt.server)
			p := proxy(t, s.Addr, nil)
			db := openBridged(t, s.DSN("encrypt="+tt.encrypt, "certificate="+s.CAFile()), mssqlbridge.WithDialer(p))
			err := within(t, "query", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), hangBound)
				defer cancel()
				return connectAndQuery(ctx, db, "SELECT 1")
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			ss := waitSessions(t, p)
			if len(ss) != 1 {
				t.Fatalf("%d connections through the proxy, want 1", len(ss))
			}
			assertNoLoginInClear(t, ss[0], tdstest.DefaultPassword)
			clear := ss[0].ClearTDSTypes(wiretest.ClientToServer)
			tlsUnits := 0
			for _, u := range ss[0].Units(wiretest.ClientToServer) {
				if u.Kind == wiretest.UnitTLS {
					tlsUnits++
				}
			}
			t.Logf("client packet types in clear: % x; TLS records: %d", clear, tlsUnits)
			if tlsUnits == 0 {
				t.Error("no TLS record from the client: the LOGIN7 did not travel in TLS")
			}
			if got := bytes.IndexByte(clear, byte(tds.TypeSQLBatch)) >= 0; got != tt.wantClear {
				t.Errorf("SQL batch in clear: %v, want %v", got, tt.wantClear)
			}
		})
	}
}

// TestInjectionAfterHandshake: bytes a man in the middle inserts into the server's stream after
// the handshake end the connection with a TLS error; none of them reaches the reader, and the
// records before them do.
func TestInjectionAfterHandshake(t *testing.T) {
	t.Parallel()
	fakeDone := wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte{0xFD, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0)
	fakeRecord := append([]byte{0x17, 0x03, 0x03, 0x00, 0x40}, bytes.Repeat([]byte{0xAA}, 0x40)...)
	const records = 10
	tests := []struct {
		name   string
		inject []byte
		before int // inject before the server's record number before (counting from 0)
		msgs   []string
	}{
		{"plaintext-tds-first", fakeDone, 0, []string{"tls: "}},
		{"plaintext-tds-later", fakeDone, 5, []string{"tls: "}},
		{"forged-record-first", fakeRecord, 0, []string{"bad record MAC"}},
		{"forged-record-later", fakeRecord, 5, []string{"bad record MAC"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := bridgeRecords(t, records, false)
			seen := 0
			p := proxy(t, s.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
				if dir == wiretest.ServerToClient && u.Kind == wiretest.UnitTLS {
					seen++
					if seen == tt.before+1 {
						return wiretest.Verdict{Send: append(append([]byte(nil), tt.inject...), u.Bytes...)}
					}
				}
				return wiretest.Verdict{Send: u.Bytes}
			})
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			defer cancel()
			c, err := dialBridge(ctx, p.Addr, clientTLS(t), bridge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.b.Close()
			_ = c.b.SetDeadline(time.Now().Add(hangBound))
			data, err, again := readAll(c.r)
			t.Logf("%d bytes, then error: %v", len(data), err)
			checkErr(t, err, nil, tt.msgs...)
			var want []byte
			for i := range tt.before {
				want = append(want, recordData(i)...)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("got %d bytes, want exactly the %d bytes before the injection", len(data), len(want))
			}
			if bytes.Contains(data, tt.inject[5:]) {
				t.Error("injected bytes reached the reader")
			}
			if again == nil {
				t.Error("Read after the TLS error succeeded")
			}
		})
	}
}

// TestInjectionDriver: plaintext TDS inserted by a proxy right after the TLS handshake (a fake
// login response) fails the bridged go-mssqldb connection with a TLS error: the driver never
// logs in on forged data.
func TestInjectionDriver(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	fake := wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte{0xFD, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0)
	injected := false
	p := proxy(t, s.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir == wiretest.ServerToClient && u.Kind == wiretest.UnitTLS && !injected {
			injected = true
			return wiretest.Verdict{Send: append(append([]byte(nil), fake...), u.Bytes...)}
		}
		return wiretest.Verdict{Send: u.Bytes}
	})
	db := openBridged(t, s.DSN("encrypt=true", "certificate="+s.CAFile()), mssqlbridge.WithDialer(p))
	err := within(t, "ping", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		defer cancel()
		return connectAndQuery(ctx, db, "SELECT 1")
	})
	t.Logf("error: %v", err)
	checkErr(t, err, nil, "tls: ")
}

// TestCertificateChecks: the certificate is verified unless the DSN or the caller's tls.Config
// relaxes it in a documented way, and the bridged connector agrees with go-mssqldb's own TLS
// on every DSN. tdstest's certificate is self-signed, so verification against the system roots
// fails.
func TestCertificateChecks(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	strict := startTDS(t, tdstest.Config{Encryption: tdstest.EncryptStrict})
	other := startTDS(t, tdstest.Config{}) // a different self-signed certificate
	const ok, unknownAuthority, badHost = certOK, certUnknownAuthority, certBadHost
	tests := []struct {
		name   string
		srv    *tdstest.Server
		params []string
		opt    *tls.Config // WithTLSConfig
		want   int
		native bool // compare with go-mssqldb's own TLS (DSN cases)
	}{
		{"encrypt-true", s, []string{"encrypt=true"}, nil, unknownAuthority, true},
		{"encrypt-true-trust-false", s, []string{"encrypt=true", "TrustServerCertificate=false"}, nil, unknownAuthority, true},
		{"encrypt-false-server-requires", s, []string{"encrypt=false"}, nil, unknownAuthority, true},
		{"encrypt-true-hostname", s, []string{"encrypt=true", "hostNameInCertificate=localhost"}, nil, unknownAuthority, true},
		{"encrypt-true-other-ca-file", s, []string{"encrypt=true", "certificate=" + other.CAFile()}, nil, unknownAuthority, true},
		{"encrypt-true-ca-file-wrong-host", s, []string{"encrypt=true", "certificate=" + s.CAFile(), "hostNameInCertificate=db.example.com"}, nil, badHost, true},
		{"encrypt-true-ca-file", s, []string{"encrypt=true", "certificate=" + s.CAFile()}, nil, ok, true},
		{"encrypt-true-trust", s, []string{"encrypt=true", "TrustServerCertificate=true"}, nil, ok, true},
		// go-mssqldb's default without an encrypt parameter trusts any certificate (its
		// msdsn sets TrustServerCertificate when encrypt is absent); the connector keeps it.
		{"no-encrypt-parameter", s, nil, nil, ok, true},
		{"strict", strict, []string{"encrypt=strict"}, nil, unknownAuthority, true},
		// go-mssqldb ignores TrustServerCertificate in strict mode: still verified.
		{"strict-trust-ignored", strict, []string{"encrypt=strict", "TrustServerCertificate=true"}, nil, unknownAuthority, true},
		{"strict-ca-file", strict, []string{"encrypt=strict", "certificate=" + strict.CAFile()}, nil, ok, true},
		{"tlsconfig-empty", s, []string{"encrypt=true"}, &tls.Config{}, unknownAuthority, false},
		// The caller's tls.Config replaces the DSN's TLS settings, TrustServerCertificate too.
		{"tlsconfig-empty-over-dsn-trust", s, []string{"encrypt=true", "TrustServerCertificate=true"}, &tls.Config{}, unknownAuthority, false},
		{"tlsconfig-roots", s, []string{"encrypt=true"}, s.TLSConfig(), ok, false},
		{"tlsconfig-roots-wrong-name", s, []string{"encrypt=true"}, &tls.Config{RootCAs: s.CertPool(), ServerName: "db.example.com"}, badHost, false},
		{"tlsconfig-insecure", s, []string{"encrypt=true"}, &tls.Config{InsecureSkipVerify: true}, ok, false},
	}
	// The same checks in go-mssqldb's other DSN forms (ADO and ODBC), where the connector
	// locates the certificate parameter itself.
	host, port, _ := net.SplitHostPort(s.Addr)
	ado := func(params ...string) string {
		return "server=" + host + ";port=" + port + ";user id=sa;password=" + tdstest.DefaultPassword + ";" + strings.Join(params, ";")
	}
	odbc := func(params ...string) string {
		return "odbc:server=" + host + ";port=" + port + ";user id=sa;password={" + tdstest.DefaultPassword + "};" + strings.Join(params, ";")
	}
	forms := []struct {
		name string
		dsn  string
		want int
	}{
		{"ado-encrypt-true", ado("encrypt=true"), unknownAuthority},
		{"ado-ca-file", ado("encrypt=true", "certificate="+s.CAFile()), ok},
		{"ado-other-ca-file", ado("encrypt=true", "certificate="+other.CAFile()), unknownAuthority},
		{"ado-ca-file-wrong-host", ado("encrypt=true", "certificate="+s.CAFile(), "hostNameInCertificate=db.example.com"), badHost},
		{"odbc-encrypt-true", odbc("encrypt=true"), unknownAuthority},
		{"odbc-ca-file", odbc("encrypt=true", "certificate="+s.CAFile()), ok},
		{"odbc-other-ca-file", odbc("encrypt=true", "certificate="+other.CAFile()), unknownAuthority},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkCertCase(t, tt.srv.DSN(tt.params...), tt.opt, tt.want, tt.native)
		})
	}
	for _, fc := range forms {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			checkCertCase(t, fc.dsn, nil, fc.want, true)
		})
	}
}

// Outcomes of a certificate check.
const (
	certOK = iota
	certUnknownAuthority
	certBadHost
)

// checkCertCase connects with dsn (and the caller's tls.Config opt, if not nil) and checks the
// outcome; with native set, go-mssqldb's own TLS must agree on success or failure.
func checkCertCase(t *testing.T, dsn string, opt *tls.Config, want int, native bool) {
	t.Helper()
	const ok, unknownAuthority, badHost = certOK, certUnknownAuthority, certBadHost
	var opts []mssqlbridge.Option
	if opt != nil {
		opts = append(opts, mssqlbridge.WithTLSConfig(opt))
	}
	db := openBridged(t, dsn, opts...)
	err := within(t, "ping", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		defer cancel()
		return db.PingContext(ctx)
	})
	switch want {
	case ok:
		if err != nil {
			t.Fatalf("want success, got %v", err)
		}
	case unknownAuthority:
		var ua x509.UnknownAuthorityError
		checkErr(t, err, []error{mssqlbridge.ErrCertificate}, "certificate")
		if !errors.As(err, &ua) {
			t.Errorf("error %q: want an x509.UnknownAuthorityError", err)
		}
	case badHost:
		var he x509.HostnameError
		checkErr(t, err, []error{mssqlbridge.ErrCertificate}, "db.example.com")
		if !errors.As(err, &he) {
			t.Errorf("error %q: want an x509.HostnameError", err)
		}
	}
	if !native {
		return
	}
	ndb, nerr := sql.Open("sqlserver", dsn)
	if nerr != nil {
		t.Fatal(nerr)
	}
	defer ndb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	nerr = ndb.PingContext(ctx)
	if (nerr == nil) != (err == nil) {
		t.Errorf("go-mssqldb's own TLS disagrees: native %v, bridged %v", nerr, err)
	}
}

// TestLoginOnlySmallPacketSize: in login-only mode only the first LOGIN7 packet travels in TLS
// (MS-TDS 3.2.5.3). go-mssqldb frames LOGIN7 with its packet size, so at packet size 512 with
// long host, user and application names the password lies beyond the driver's first packet.
// The connector re-frames the message so that it lies in the first packet, inside TLS: the
// login succeeds, the queries cross in clear (proof that the mode was login-only), and neither
// a LOGIN7 packet nor the password does. Names so long that the password lies past 4096 bytes
// are refused with ErrSecretOutsideTLS at packet size 512, without a byte of LOGIN7 or the
// password in clear. (A larger packet size would carry them in one packet, but tdstest, as
// MS-TDS 2.2.3.1.3 says, takes no packet over 4096 bytes before login; mssqlbridge's
// TestLoginOnlySecretsNeverInClear covers that case against its fake server.) The same holds
// for the new password of a password change, which go-mssqldb puts after every name.
func TestLoginOnlySmallPacketSize(t *testing.T) {
	t.Parallel()
	user := strings.Repeat("u", 128)
	newPassword := "N3w-" + strings.Repeat("p", 124) // 128 characters, last in LOGIN7
	for _, tt := range []struct {
		name        string
		workstation int // characters
		packetSize  string
		change      bool // a password change: the new password travels in LOGIN7 too
		wantErr     error
	}{
		{"names-before-password-512", 128, "512", false, nil},
		{"password-past-4096-512", 2100, "512", false, mssqlbridge.ErrSecretOutsideTLS},
		{"new-password-512", 128, "512", true, nil},
		{"new-password-past-4096-512", 1650, "512", true, mssqlbridge.ErrSecretOutsideTLS}, // the password fits, the new one does not
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startTDS(t, tdstest.Config{Encryption: tdstest.EncryptOff, User: user})
			p := proxy(t, s.Addr, nil)
			params := []string{"encrypt=false", "certificate=" + s.CAFile(), "packet size=" + tt.packetSize,
				"workstation id=" + strings.Repeat("w", tt.workstation), "app name=" + strings.Repeat("a", 128)}
			if tt.change {
				params = append(params, "change password="+newPassword)
			}
			db := openBridged(t, s.DSN(params...), mssqlbridge.WithDialer(p))
			err := within(t, "query", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), hangBound)
				defer cancel()
				return connectAndQuery(ctx, db, "SELECT 1")
			})
			t.Logf("query: %v", err)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("query: %v", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("query: %v, want %v", err, tt.wantErr)
			case tt.wantErr != nil && tt.change && !strings.Contains(err.Error(), "the new password ends"):
				t.Fatalf("query: %v, want the refusal to name the new password", err)
			}
			_ = db.Close()
			ss := waitSessions(t, p)
			if len(ss) == 0 {
				t.Fatal("no connection through the proxy")
			}
			for _, sess := range ss {
				clear := sess.ClearTDSTypes(wiretest.ClientToServer)
				t.Logf("client packet types in clear: % x", clear)
				assertNoLoginInClear(t, sess, tdstest.DefaultPassword)
				if wiretest.ContainsPassword(sess.Sent(wiretest.ClientToServer), newPassword) {
					t.Errorf("the new password crossed in the clear")
				}
				if tt.wantErr == nil && bytes.IndexByte(clear, byte(tds.TypeSQLBatch)) < 0 {
					t.Errorf("no SQL batch in clear: the connection was not login-only")
				}
			}
		})
	}
}

// TestLoginOnlyLongLogin7: a LOGIN7 message of several packets in login-only mode, driven
// through the connector's conn as go-mssqldb would send it (512-byte packets), reaches a
// login-only server whole and in order: the first packet inside TLS, carrying at least the
// first 4088 bytes of the message, the rest in plaintext.
func TestLoginOnlyLongLogin7(t *testing.T) {
	t.Parallel()
	// A LOGIN7 message (MS-TDS 2.2.6.4) of 10,000 bytes: the fixed part with Length, TDS 7.4
	// and a 16-character password right after it, then a database name to the end.
	msg := pattern("LOGIN7-payload-", 10_000)
	clear(msg[:94])
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.LittleEndian.PutUint32(msg[4:], 0x74000004)
	binary.LittleEndian.PutUint16(msg[44:], 94)               // ibPassword
	binary.LittleEndian.PutUint16(msg[46:], 16)               // cchPassword
	binary.LittleEndian.PutUint16(msg[68:], 94+32)            // ibDatabase
	binary.LittleEndian.PutUint16(msg[70:], (10_000-94-32)/2) // cchDatabase
	type got struct {
		first   int // payload bytes of the first (TLS) packet
		payload []byte
		err     error
	}
	result := make(chan got, 1)
	cfg := serverTLS(t)
	s := scriptServer(t, func(c net.Conn) {
		var g got
		defer func() { result <- g }()
		if _, g.err = wiretest.ReadClientPrelogin(c); g.err != nil {
			return
		}
		if _, g.err = c.Write(wiretest.PreloginReply(prelogin.EncryptOff)); g.err != nil {
			return
		}
		b := bridge.New(c, bridge.Options{Role: bridge.RoleServer})
		tc := tls.Server(b, cfg)
		if g.err = tc.Handshake(); g.err != nil {
			return
		}
		if g.err = b.StartPassthrough(); g.err != nil {
			return
		}
		h, body, err := tds.NewReader(tc, tds.ReaderConfig{}).ReadPacket()
		if g.err = err; err != nil {
			return
		}
		g.first = len(body)
		g.payload = append(g.payload, body...)
		if g.err = b.StartPlaintext(); g.err != nil {
			return
		}
		rd := tds.NewReader(b, tds.ReaderConfig{MaxMessageSize: 1 << 20})
		for h.Status&tds.StatusEOM == 0 {
			h, body, g.err = rd.ReadPacket()
			if g.err != nil {
				return
			}
			if h.Type != tds.TypeLogin7 {
				g.err = fmt.Errorf("packet of type %v in the LOGIN7 message", h.Type)
				return
			}
			g.payload = append(g.payload, body...)
		}
	})
	conn := dialConnector(t, "sqlserver://sa:pw@"+s.Addr+"?encrypt=false&TrustServerCertificate=true", s.Addr)
	defer conn.Close()
	if _, err := conn.Write(driverPrelogin()); err != nil {
		t.Fatalf("PRELOGIN: %v", err)
	}
	w := tds.NewWriter(conn, tds.MinPacketSize)
	if err := w.WriteMessage(tds.TypeLogin7, msg); err != nil {
		t.Fatalf("LOGIN7: %v", err)
	}
	var g got
	_ = within(t, "server", func() error { g = <-result; return nil })
	if g.err != nil {
		t.Fatalf("server: %v", g.err)
	}
	t.Logf("first packet (in TLS): %d payload bytes; message: %d bytes", g.first, len(g.payload))
	if g.first < tds.DefaultPacketSize-tds.HeaderSize {
		t.Errorf("the TLS packet carried %d payload bytes, want at least %d", g.first, tds.DefaultPacketSize-tds.HeaderSize)
	}
	if !bytes.Equal(g.payload, msg) {
		t.Errorf("the server got %d bytes, not the %d-byte message (first difference at %d)", len(g.payload), len(msg), firstDiff(g.payload, msg))
	}
}

// TestInjectionConnectorConn: at the level of the conn go-mssqldb reads, plaintext bytes a
// proxy inserts into the server's stream after the handshake (a forged answer to the client's
// LOGIN7, sent as soon as the client's first record goes by) surface as a TLS error, and not
// one byte of them is handed to the reader.
func TestInjectionConnectorConn(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	fake := wiretest.Packet(tds.TypeTabularResult, tds.StatusEOM, []byte{0xFD, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0)
	var injected atomic.Bool
	p := proxy(t, s.Addr, func(dir wiretest.Direction, u *wiretest.Unit) wiretest.Verdict {
		if dir == wiretest.ClientToServer && u.Kind == wiretest.UnitTLS && !injected.Swap(true) {
			return wiretest.Verdict{Send: u.Bytes, Back: fake}
		}
		return wiretest.Verdict{Send: u.Bytes}
	})
	conn := dialConnector(t, s.DSN("encrypt=true", "certificate="+s.CAFile()), p.Addr)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(hangBound))
	if _, err := conn.Write(driverPrelogin()); err != nil {
		t.Fatalf("PRELOGIN: %v", err)
	}
	if _, _, err := tds.NewReader(conn, tds.ReaderConfig{}).ReadMessage(); err != nil {
		t.Fatalf("PRELOGIN reply: %v", err)
	}
	// Any LOGIN7 will do: the proxy answers it with the forgery before the server sees it.
	if _, err := conn.Write(wiretest.Packet(tds.TypeLogin7, tds.StatusEOM, make([]byte, 94), 0)); err != nil {
		t.Fatalf("LOGIN7: %v", err)
	}
	var data []byte
	buf := make([]byte, 4096)
	var err error
	for err == nil {
		var n int
		n, err = conn.Read(buf)
		data = append(data, buf[:n]...)
	}
	t.Logf("%d bytes, then: %v", len(data), err)
	checkErr(t, err, nil, "tls: ")
	if !injected.Load() {
		t.Fatal("the proxy saw no client record to answer")
	}
	if len(data) != 0 {
		t.Errorf("the reader got %d bytes (% x...)", len(data), data[:min(len(data), 16)])
	}
}
