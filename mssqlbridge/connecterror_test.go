package mssqlbridge

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// slack is added to a bound for "the call returned in time": generous, for shared machines.
const slack = 3 * time.Second

// loopbackPeer is a TCP listener on 127.0.0.1 whose connections serve runs; Close closes the
// listener and every accepted connection, and waits for the goroutines.
type loopbackPeer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newLoopbackPeer(t *testing.T, serve func(net.Conn)) *loopbackPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &loopbackPeer{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				serve(c)
			}()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *loopbackPeer) addr() string { return p.ln.Addr().String() }

func (p *loopbackPeer) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// httpPeer answers anything with an HTTP error, as a web server on the port would.
func httpPeer(c net.Conn) {
	buf := make([]byte, 512)
	if _, err := c.Read(buf); err != nil {
		return
	}
	_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	_ = c.Close()
}

// silentPeer accepts and never answers.
func silentPeer(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// dsnFor is a DSN for a server at addr with the test server's credentials.
func dsnFor(addr string, params ...string) string {
	return (&tdstest.Server{Addr: addr}).DSN(params...)
}

// closedAddr returns a loopback address where nothing listens any more: a dial is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestConnectErrors: what a user gets wrong, and what a server does wrong, fails with a
// *ConnectError that names the host, the phase and, where a time bound ended it, the bound;
// the cause stays reachable with errors.Is and errors.As; every call returns within its bound
// plus slack. The errors are those database/sql returns from PingContext.
// ctxBound matches the figure of a context deadline in a ConnectError's text.
var ctxBound = regexp.MustCompile(`within [0-9.]+m?s, the context deadline`)

const ctxBoundAny = "within …, the context deadline"

func TestConnectErrors(t *testing.T) {
	http := newLoopbackPeer(t, httpPeer)
	silent := newLoopbackPeer(t, silentPeer)
	notSup := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup})
	on := startServer(t, tdstest.Config{})
	off := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff})
	stallTLS := startServer(t, tdstest.Config{Faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionStall}})
	stallStrict := startServer(t, tdstest.Config{Encryption: tdstest.EncryptStrict,
		Faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionStall}})
	_, silentPort, _ := net.SplitHostPort(silent.addr())

	var netErr net.Error
	var certErr *CertificateError
	var x509Err x509.UnknownAuthorityError
	tests := []struct {
		name    string
		dsn     string
		lookup  func(ctx context.Context, host string) ([]net.IPAddr, error)
		ctx     time.Duration // the context's timeout; 0: none
		bound   time.Duration // the call must return within bound + slack
		phase   ConnectPhase
		msgs    []string // substrings of the text
		is      []error  // errors.Is targets
		as      []any    // errors.As targets
		timeout bool     // errors.Is(err, context.DeadlineExceeded)
	}{
		{
			name: "an HTTP server on the port", dsn: dsnFor(http.addr(), "encrypt=true"), ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhasePrelogin, msgs: []string{"PRELOGIN: the peer is not a SQL Server: its reply starts with \"HTTP/1.1\""},
			is: []error{ErrMalformedReply},
		},
		{
			name: "a silent port, dial timeout", dsn: dsnFor(silent.addr(), "encrypt=true", "dial timeout=2"), bound: 2 * time.Second,
			phase: PhasePrelogin, msgs: []string{"PRELOGIN: no answer within 2s, the dial timeout"}, timeout: true,
		},
		{
			name: "a silent port, context deadline", dsn: dsnFor(silent.addr(), "encrypt=true"), ctx: 1500 * time.Millisecond, bound: 1500 * time.Millisecond,
			phase: PhasePrelogin, msgs: []string{"PRELOGIN: no answer within 1.5s, the context deadline"}, timeout: true,
		},
		{
			name: "a silent port, connection timeout", dsn: dsnFor(silent.addr(), "encrypt=true", "connection timeout=1"), ctx: 20 * time.Second, bound: time.Second,
			phase: PhasePrelogin, msgs: []string{"PRELOGIN: no answer within 1s, the connection timeout"}, timeout: true,
			as: []any{&netErr},
		},
		{
			name: "encrypt=true, a server without encryption", dsn: notSup.DSN("encrypt=true"), ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhasePrelogin, msgs: []string{"does not support encryption", "encrypt=true requires it", "Force Encryption", "encrypt=disable"},
			is: []error{ErrServerNoEncryption},
		},
		{
			name: "encrypt=disable, a server that requires encryption", dsn: on.DSN("encrypt=disable"), ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhasePrelogin, msgs: []string{"the server requires encryption (it answered ENCRYPTION=REQ) and encrypt=disable refuses it"},
			is: []error{ErrServerRequiresEncryption},
		},
		{
			name: "the server stalls the TLS handshake", dsn: stallTLS.DSN("encrypt=true", "certificate="+stallTLS.CAFile()), ctx: 2 * time.Second, bound: 2 * time.Second,
			phase: PhaseHandshake, msgs: []string{"TLS handshake: no answer within 2s, the context deadline (", "tcp ", "prelogin "}, timeout: true,
		},
		{
			name: "the server stalls the TLS handshake, dial timeout", dsn: stallTLS.DSN("encrypt=true", "certificate="+stallTLS.CAFile(), "dial timeout=1"), ctx: 20 * time.Second, bound: time.Second,
			phase: PhaseHandshake, msgs: []string{"TLS handshake: no answer within 1s, the dial timeout"}, timeout: true,
		},
		{
			name: "strict: the server stalls the TLS handshake", dsn: stallStrict.DSN("encrypt=strict", "certificate="+stallStrict.CAFile()), ctx: time.Second, bound: time.Second,
			phase: PhaseHandshake, msgs: []string{"TLS handshake: no answer within 1s, the context deadline (", "tcp "}, timeout: true,
		},
		{
			name: "an untrusted certificate", dsn: on.DSN("encrypt=true"), ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhaseHandshake, msgs: []string{"TLS handshake: certificate verification failed for host \"127.0.0.1\""},
			is: []error{ErrCertificate}, as: []any{&certErr, &x509Err},
		},
		{
			name: "encrypt=false: LOGIN7 secret outside TLS", dsn: off.DSN("encrypt=false", "certificate="+off.CAFile(), "packet size=512", "workstation id="+strings.Repeat("w", 2100)),
			ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhaseLogin, msgs: []string{"LOGIN7 send: a LOGIN7 secret would travel outside TLS"}, is: []error{ErrSecretOutsideTLS},
		},
		{
			name: "nothing listening", dsn: dsnFor(closedAddr(t), "encrypt=true"), ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhaseTCP, msgs: []string{"TCP connect: connection refused"}, as: []any{&netErr},
		},
		{
			name: "a name that does not resolve", dsn: dsnFor(net.JoinHostPort("db.example.invalid", silentPort), "encrypt=true"),
			lookup: func(ctx context.Context, host string) ([]net.IPAddr, error) {
				return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
			},
			ctx: 10 * time.Second, bound: 10 * time.Second,
			phase: PhaseLookup, msgs: []string{"mssqlbridge: connect db.example.invalid:" + silentPort + ": lookup: no such host"},
			as: []any{new(*net.DNSError)},
		},
		{
			name: "a name, a silent port", dsn: dsnFor(net.JoinHostPort("db.example.test", silentPort), "encrypt=true"),
			lookup: func(ctx context.Context, host string) ([]net.IPAddr, error) {
				return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
			},
			ctx: time.Second, bound: time.Second,
			phase: PhasePrelogin, msgs: []string{"mssqlbridge: connect db.example.test:" + silentPort + " (127.0.0.1): PRELOGIN: no answer within 1s, the context deadline (lookup ", ", tcp "},
			timeout: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConnector(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if tc.lookup != nil {
				c.Dialer.(*dialer).s.lookup = tc.lookup
			}
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			err = openDB(t, c).PingContext(ctx)
			took := time.Since(start)
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
			if took > tc.bound+slack {
				t.Errorf("returned after %v, want within %v + %v", took, tc.bound, slack)
			}
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *ConnectError", err, err)
			}
			host, _, _ := net.SplitHostPort(ce.Host)
			if ce.Phase != tc.phase || !strings.Contains(err.Error(), host) {
				t.Errorf("phase %v, host %q; want phase %v and the host named", ce.Phase, ce.Host, tc.phase)
			}
			if n := len(ce.Timings); n == 0 || ce.Timings[n-1].Phase != tc.phase {
				t.Errorf("timings %v: want the failed phase last", ce.Timings)
			}
			for _, m := range tc.msgs {
				// A context's remaining time is measured when the dial starts, a little after
				// the test set it: compare the texts with that figure left out.
				if got := ctxBound.ReplaceAllString(err.Error(), ctxBoundAny); !strings.Contains(got, ctxBound.ReplaceAllString(m, ctxBoundAny)) {
					t.Errorf("error %q does not contain %q", err, m)
				}
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = false", target)
				}
			}
			for _, target := range tc.as {
				if !errors.As(err, target) {
					t.Errorf("errors.As(err, %T) = false", target)
				}
			}
			if got := errors.Is(err, context.DeadlineExceeded); got != tc.timeout {
				t.Errorf("errors.Is(err, context.DeadlineExceeded) = %v, want %v", got, tc.timeout)
			}
		})
	}
}

// TestConnectErrorThroughDriver: go-mssqldb's Connect returns the dial's and the first
// Write's errors unchanged, so the *ConnectError reaches database/sql.
func TestConnectErrorThroughDriver(t *testing.T) {
	srv := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup})
	c, err := NewConnector(srv.DSN("encrypt=true"))
	if err != nil {
		t.Fatal(err)
	}
	var _ *mssql.Connector = c
	conn, err := c.Connect(context.Background())
	if err == nil {
		_ = conn.Close()
		t.Fatal("connected")
	}
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Phase != PhasePrelogin || !errors.Is(err, ErrServerNoEncryption) {
		t.Fatalf("Connect: %v (%T), want a PRELOGIN *ConnectError matching ErrServerNoEncryption", err, err)
	}
}

// TestConnectErrorText: the text's parts, for fixed values.
func TestConnectErrorText(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  *ConnectError
		want string
	}{
		{"bound", &ConnectError{Host: "db.example.com:1433", Addr: "10.0.0.5:1433", Phase: PhaseHandshake, Err: context.DeadlineExceeded,
			Timings: []PhaseTiming{{PhaseLookup, time.Millisecond}, {PhaseTCP, 400 * time.Microsecond}, {PhasePrelogin, 800 * time.Microsecond}, {PhaseHandshake, 2 * time.Second}},
			bound:   "context deadline", within: 1999 * time.Millisecond},
			"mssqlbridge: connect db.example.com:1433 (10.0.0.5): TLS handshake: no answer within 2s, the context deadline (lookup 1.0ms, tcp 0.4ms, prelogin 0.8ms)"},
		{"an address of another port", &ConnectError{Host: "db:1433", Addr: "10.0.0.5:9999", Phase: PhaseTCP, Err: base,
			Timings: []PhaseTiming{{PhaseTCP, 12 * time.Millisecond}}},
			"mssqlbridge: connect db:1433 (10.0.0.5:9999): TCP connect: boom"},
		{"an IP host", &ConnectError{Host: "127.0.0.1:1433", Addr: "127.0.0.1:1433", Phase: PhasePrelogin, Err: fmt.Errorf("mssqlbridge: PRELOGIN: %w", base),
			Timings: []PhaseTiming{{PhaseTCP, 1500 * time.Millisecond}, {PhasePrelogin, time.Millisecond}}},
			"mssqlbridge: connect 127.0.0.1:1433: PRELOGIN: boom (tcp 1.5s)"},
		{"an unknown bound", &ConnectError{Host: "h:1", Phase: PhaseLogin, Err: base, bound: "deadline"},
			"mssqlbridge: connect h:1: LOGIN7 send: no answer before the deadline"},
		{"encryption facts", &ConnectError{Host: "h:1", Phase: PhaseLogin, Err: fmt.Errorf("%w: the password ends ...", ErrSecretOutsideTLS),
			Timings: []PhaseTiming{{PhaseTCP, time.Millisecond}, {PhasePrelogin, time.Millisecond}, {PhaseHandshake, 2 * time.Millisecond}, {PhaseLogin, 0}},
			Encrypt: "false", EncryptionSent: prelogin.EncryptOff, EncryptionReply: prelogin.EncryptOff, Replied: true},
			"mssqlbridge: connect h:1: LOGIN7 send: a LOGIN7 secret would travel outside TLS: the password ends ... (encrypt=false, PRELOGIN ENCRYPTION sent OFF, answered OFF; tcp 1.0ms, prelogin 1.0ms, tls 2.0ms)"},
		{"strict, no phase before", &ConnectError{Host: "h:1", Phase: PhaseHandshake, Err: base, Encrypt: "strict"},
			"mssqlbridge: connect h:1: TLS handshake: boom (encrypt=strict)"},
		{"encryption facts before the handshake", &ConnectError{Host: "h:1", Phase: PhasePrelogin, Err: base,
			Timings: []PhaseTiming{{PhaseTCP, time.Millisecond}, {PhasePrelogin, time.Millisecond}}, Encrypt: "true"},
			"mssqlbridge: connect h:1: PRELOGIN: boom (tcp 1.0ms)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	if s := ConnectPhase(9).String(); s != "ConnectPhase(9)" {
		t.Errorf("unknown phase: %q", s)
	}
}

// TestDialTimeoutBound: which bound a dial's context is, judged from its deadline.
func TestDialTimeoutBound(t *testing.T) {
	s := &settings{dialTimeout: 15 * time.Second}
	tests := []struct {
		name  string
		ctxTO time.Duration
		bound string
	}{
		{"go-mssqldb's dial timeout", 15 * time.Second, "dial timeout"},
		{"a shorter context", 2 * time.Second, "context deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxTO)
			defer cancel()
			if tr := newTrace(ctx, s, "h:1"); tr.ctxBound != tc.bound {
				t.Errorf("bound %q, want %q", tr.ctxBound, tc.bound)
			}
		})
	}
	if tr := newTrace(context.Background(), s, "h:1"); tr.ctxBound != "" {
		t.Errorf("no deadline: bound %q", tr.ctxBound)
	}
}

// TestLoginStallBounded: a server that reads LOGIN7 and never answers fails the connect when
// the context ends (the wait for the login response is go-mssqldb's, and so is its error),
// or when the connection timeout does.
func TestLoginStallBounded(t *testing.T) {
	srv := startServer(t, tdstest.Config{Faults: tdstest.Faults{At: tdstest.PhaseLogin, Action: tdstest.ActionStall}})
	tests := []struct {
		name  string
		param string
		ctx   time.Duration
		bound time.Duration
	}{
		{"context deadline", "dial timeout=15", time.Second, time.Second},
		{"connection timeout", "connection timeout=1", 20 * time.Second, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bridgedDB(t, srv.DSN("encrypt=true", "certificate="+srv.CAFile(), tc.param))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			start := time.Now()
			err = db.PingContext(ctx)
			took := time.Since(start)
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
			var ne net.Error
			if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("got %v, want a timeout", err)
			}
			if took > tc.bound+slack {
				t.Errorf("returned after %v, want within %v + %v", took, tc.bound, slack)
			}
		})
	}
}

// TestConnectErrorExplain: the encrypt setting is named as the DSN spells it; the ENCRYPTION
// values come from the exchange, or, for a refusal, from the *prelogin.NegotiationError.
func TestConnectErrorExplain(t *testing.T) {
	refusal := fmt.Errorf("mssqlbridge: PRELOGIN negotiation: %w",
		&prelogin.NegotiationError{Err: ErrServerNoEncryption, Sent: prelogin.EncryptOn, Reply: prelogin.EncryptNotSup})
	tests := []struct {
		name       string
		setting    msdsn.Encryption
		x          encryptionExchange
		err        error
		encrypt    string
		sent, repl prelogin.Encryption
		replied    bool
	}{
		{"disable, no reply", msdsn.EncryptionDisabled, encryptionExchange{}, io.EOF, "disable", 0, 0, false},
		{"false, login only", msdsn.EncryptionOff, encryptionExchange{prelogin.EncryptOff, prelogin.EncryptOff, true}, io.EOF,
			"false", prelogin.EncryptOff, prelogin.EncryptOff, true},
		{"true, a refusal", msdsn.EncryptionRequired, encryptionExchange{}, refusal, "true", prelogin.EncryptOn, prelogin.EncryptNotSup, true},
		{"strict", msdsn.EncryptionStrict, encryptionExchange{}, io.EOF, "strict", 0, 0, false},
		{"unknown setting", msdsn.Encryption(9), encryptionExchange{}, io.EOF, "Encryption(9)", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &ConnectError{Err: tc.err}
			e.explain(&settings{encryption: tc.setting}, tc.x)
			if e.Encrypt != tc.encrypt || e.EncryptionSent != tc.sent || e.EncryptionReply != tc.repl || e.Replied != tc.replied {
				t.Errorf("got %q %v %v %v, want %q %v %v %v", e.Encrypt, e.EncryptionSent, e.EncryptionReply, e.Replied,
					tc.encrypt, tc.sent, tc.repl, tc.replied)
			}
		})
	}
}

// TestConnectErrorEncryption: a failed connection's *ConnectError carries the encrypt setting
// and the ENCRYPTION values exchanged, and its text shows them from the TLS handshake on.
func TestConnectErrorEncryption(t *testing.T) {
	notSup := startServer(t, tdstest.Config{Encryption: tdstest.EncryptNotSup})
	on := startServer(t, tdstest.Config{})
	off := startServer(t, tdstest.Config{Encryption: tdstest.EncryptOff})
	noTDS8 := newLoopbackPeer(t, func(c net.Conn) { _, _ = io.ReadFull(c, make([]byte, 8)); _ = c.Close() })
	tests := []struct {
		name       string
		dsn        string
		phase      ConnectPhase
		encrypt    string
		sent, repl prelogin.Encryption
		replied    bool
		text       string // in the text; "" for none
	}{
		{"a refusal", notSup.DSN("encrypt=true"), PhasePrelogin, "true", prelogin.EncryptOn, prelogin.EncryptNotSup, true, ""},
		{"an untrusted certificate", on.DSN("encrypt=true"), PhaseHandshake, "true", prelogin.EncryptOn, prelogin.EncryptOn, true,
			" (encrypt=true, PRELOGIN ENCRYPTION sent ON, answered ON; tcp "},
		{"login only, LOGIN7 secret outside TLS",
			off.DSN("encrypt=false", "certificate="+off.CAFile(), "packet size=512", "workstation id="+strings.Repeat("w", 2100)),
			PhaseLogin, "false", prelogin.EncryptOff, prelogin.EncryptOff, true,
			" (encrypt=false, PRELOGIN ENCRYPTION sent OFF, answered OFF; tcp "},
		{"strict, no TDS 8.0", dsnFor(noTDS8.addr(), "encrypt=strict"), PhaseHandshake, "strict", 0, 0, false, " (encrypt=strict; tcp "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bridgedDB(t, tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = db.PingContext(ctx)
			t.Log(err)
			var ce *ConnectError
			if !errors.As(err, &ce) || ce.Phase != tc.phase {
				t.Fatalf("got %v, want a *ConnectError in phase %v", err, tc.phase)
			}
			if ce.Encrypt != tc.encrypt || ce.Replied != tc.replied || ce.EncryptionSent != tc.sent || ce.EncryptionReply != tc.repl {
				t.Errorf("Encrypt %q, Replied %v, sent %v, reply %v; want %q, %v, %v, %v",
					ce.Encrypt, ce.Replied, ce.EncryptionSent, ce.EncryptionReply, tc.encrypt, tc.replied, tc.sent, tc.repl)
			}
			if got := strings.Contains(err.Error(), "encrypt="+tc.encrypt+", PRELOGIN") || strings.Contains(err.Error(), "(encrypt="); tc.text == "" && got {
				t.Errorf("the text shows the encryption facts before the TLS handshake")
			} else if tc.text != "" && !strings.Contains(err.Error(), tc.text) {
				t.Errorf("the text does not say %q", tc.text)
			}
		})
	}
}
