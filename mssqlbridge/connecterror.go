package mssqlbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// ConnectPhase is a step of a connection attempt, in the order they run (in strict mode the
// TLS handshake runs before PRELOGIN, at dial time).
type ConnectPhase uint8

const (
	// PhaseLookup: resolving the host name (skipped for an IP address and with WithDialer,
	// whose dialer resolves the name itself).
	PhaseLookup ConnectPhase = iota + 1
	// PhaseTCP: opening the TCP connection (every address of the name, see NewConnector).
	PhaseTCP
	// PhasePrelogin: sending the driver's PRELOGIN and reading the server's reply.
	PhasePrelogin
	// PhaseHandshake: the TLS handshake (inside PRELOGIN packets, or on the socket in strict
	// mode).
	PhaseHandshake
	// PhaseLogin: sending the LOGIN7 message. The wait for the server's login response is
	// go-mssqldb's, and so are its errors.
	PhaseLogin
)

var phaseNames = [...]string{
	PhaseLookup:    "lookup",
	PhaseTCP:       "TCP connect",
	PhasePrelogin:  "PRELOGIN",
	PhaseHandshake: "TLS handshake",
	PhaseLogin:     "LOGIN7 send",
}

// short names, for the list of timings in ConnectError's text and the log.
var phaseKeys = [...]string{
	PhaseLookup:    "lookup",
	PhaseTCP:       "tcp",
	PhasePrelogin:  "prelogin",
	PhaseHandshake: "tls",
	PhaseLogin:     "login7",
}

// String returns the phase's name as error texts use it ("TLS handshake").
func (p ConnectPhase) String() string {
	if p > 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "ConnectPhase(" + strconv.Itoa(int(p)) + ")"
}

func (p ConnectPhase) key() string {
	if p > 0 && int(p) < len(phaseKeys) {
		return phaseKeys[p]
	}
	return p.String()
}

// PhaseTiming is how long one phase of a connection attempt took.
type PhaseTiming struct {
	Phase    ConnectPhase
	Duration time.Duration
}

// ConnectError reports a failed connection attempt: the phase that failed, the host and
// address, how long each phase took, and the cause. It is the error of every failure of the
// dial (lookup, TCP connect, in strict mode the TLS handshake), of the driver's first Write
// (the PRELOGIN exchange and the TLS handshake) and of the LOGIN7 send; go-mssqldb returns it
// unchanged from Connect, and database/sql from Ping, PingContext, QueryContext and the rest.
//
// errors.Is and errors.As see through it to Err: this package's sentinels
// (ErrServerNoEncryption, ErrMalformedReply, ErrCertificate, ...) and types
// (*CertificateError, ...), the net.Error, crypto/tls or crypto/x509 error beneath, and
// context.DeadlineExceeded whenever a time bound ended the attempt: the context's deadline,
// the dial timeout (which go-mssqldb puts in the dial's context) or the connection timeout
// (go-mssqldb's socket deadlines). The text names which bound it was.
type ConnectError struct {
	// Host is "host:port" as dialed: the DSN's host, or the one a routing redirect named.
	Host string
	// Addr is the address connected to (with WithDialer: the dialer's conn's remote address),
	// or, when the TCP connect failed, the addresses tried, comma-separated; empty when the
	// lookup failed.
	Addr string
	// Phase is the phase that failed.
	Phase ConnectPhase
	// Timings are the phases run, in order; the failed one is last.
	Timings []PhaseTiming
	// Err is the cause.
	Err error

	// Encrypt is the DSN's encrypt setting, under the name this package's texts use:
	// "disable", "false", "true" or "strict" (go-mssqldb's synonyms, "mandatory", "no", ...,
	// are read as one of these).
	Encrypt string
	// EncryptionSent is the ENCRYPTION value of the PRELOGIN the bridge sent, and
	// EncryptionReply the server's answer, when Replied: the server's PRELOGIN reply was read
	// and its ENCRYPTION value decided the mode (or was refused, see ErrServerNoEncryption).
	// In strict mode PRELOGIN travels inside TLS and its value decides nothing: Replied is false.
	EncryptionSent, EncryptionReply prelogin.Encryption
	Replied                         bool

	bound  string        // the time bound that ended the attempt ("dial timeout", ...), or ""
	within time.Duration // that bound's length; 0 when unknown
}

// encryptionExchange is what a PRELOGIN exchange decided encryption on: the ENCRYPTION values
// sent and replied. The zero value means that no reply was read.
type encryptionExchange struct {
	sent, reply prelogin.Encryption
	replied     bool
}

// explain records on e the encryption facts of the attempt: s's encrypt setting and the values
// of x, or, for an encryption refusal, those the *prelogin.NegotiationError in Err names.
func (e *ConnectError) explain(s *settings, x encryptionExchange) {
	e.Encrypt = encryptSetting(s.encryption)
	var nerr *prelogin.NegotiationError
	if !x.replied && errors.As(e.Err, &nerr) {
		x = encryptionExchange{sent: nerr.Sent, reply: nerr.Reply, replied: true}
	}
	e.EncryptionSent, e.EncryptionReply, e.Replied = x.sent, x.reply, x.replied
}

// encryptSetting names an encrypt setting as the DSN spells it.
func encryptSetting(e msdsn.Encryption) string {
	switch e {
	case msdsn.EncryptionDisabled:
		return "disable"
	case msdsn.EncryptionOff:
		return "false"
	case msdsn.EncryptionRequired:
		return "true"
	case msdsn.EncryptionStrict:
		return "strict"
	}
	return "Encryption(" + strconv.Itoa(int(e)) + ")" // newSettings refuses any other
}

// Error returns "mssqlbridge: connect HOST (ADDR): PHASE: WHAT (ENCRYPTION; TIMINGS)", where
// TIMINGS are the phases completed before the failed one, and ENCRYPTION, from the TLS
// handshake on, the encrypt setting and the ENCRYPTION values exchanged ("encrypt=false,
// PRELOGIN ENCRYPTION sent OFF, answered OFF"): they say whether the TLS was for the login
// only or for every packet. An earlier phase's text says all that matters about encryption
// (the refusals name both values and the setting) or nothing does.
func (e *ConnectError) Error() string {
	var b strings.Builder
	b.WriteString("mssqlbridge: connect ")
	b.WriteString(e.Host)
	if a := e.shownAddr(); a != "" {
		b.WriteString(" (" + a + ")")
	}
	b.WriteString(": " + e.Phase.String() + ": " + e.detail())
	var facts []string
	if s := e.encryption(); s != "" {
		facts = append(facts, s)
	}
	if n := len(e.Timings) - 1; n > 0 {
		timings := make([]string, n)
		for i, t := range e.Timings[:n] {
			timings[i] = t.Phase.key() + " " + formatDuration(t.Duration)
		}
		facts = append(facts, strings.Join(timings, ", "))
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, "; ") + ")")
	}
	return b.String()
}

// encryption is the text of the encryption facts, for a failure from the TLS handshake on;
// "" before it or when the facts are unknown.
func (e *ConnectError) encryption() string {
	if e.Phase < PhaseHandshake || e.Encrypt == "" {
		return ""
	}
	s := "encrypt=" + e.Encrypt
	if e.Replied {
		s += ", PRELOGIN ENCRYPTION sent " + e.EncryptionSent.String() + ", answered " + e.EncryptionReply.String()
	}
	return s
}

// Unwrap returns Err, and context.DeadlineExceeded when a time bound ended the attempt and
// Err does not already match it.
func (e *ConnectError) Unwrap() []error {
	if e.bound != "" && !errors.Is(e.Err, context.DeadlineExceeded) {
		return []error{e.Err, context.DeadlineExceeded}
	}
	return []error{e.Err}
}

// shownAddr is Addr as the text shows it: without the port when it is Host's, and not at all
// when it says no more than Host.
func (e *ConnectError) shownAddr() string {
	if e.Addr == "" || e.Addr == e.Host {
		return ""
	}
	h, hp, err1 := net.SplitHostPort(e.Host)
	a, ap, err2 := net.SplitHostPort(e.Addr)
	if err1 != nil || err2 != nil || hp != ap {
		return e.Addr
	}
	if a == h {
		return ""
	}
	return a
}

// detail says what went wrong, once: a bound that ended the phase, a refusal with its
// remedy, or the cause's text without the prefixes the phase and host already say.
func (e *ConnectError) detail() string {
	if e.bound != "" {
		if e.within > 0 {
			return "no answer within " + formatBound(e.within) + ", the " + e.bound
		}
		return "no answer before the " + e.bound
	}
	if errors.Is(e.Err, context.Canceled) {
		return "the context was cancelled"
	}
	var nerr *prelogin.NegotiationError
	if errors.As(e.Err, &nerr) {
		if s := refusal(nerr); s != "" {
			return s
		}
	}
	if e.Phase == PhaseTCP || e.Phase == PhaseLookup {
		return dialDetail(e.Err)
	}
	return e.trim(e.Err.Error())
}

// trim removes from a cause's text the package prefix and a leading "PHASE: " or
// "PHASE with HOST: ", which the ConnectError's text already says.
func (e *ConnectError) trim(s string) string {
	s = strings.TrimPrefix(s, "mssqlbridge: ")
	host, _, _ := net.SplitHostPort(e.Host)
	for _, p := range []string{e.Phase.String() + " with " + host + ": ", e.Phase.String() + ": "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest
		}
	}
	return s
}

// refusal is the text of an encryption refusal: what the server answered, what the user's
// setting requires, and what to change; "" for other negotiation errors.
func refusal(e *prelogin.NegotiationError) string {
	setting := "the encrypt setting"
	switch e.Sent.Base() {
	case prelogin.EncryptOn, prelogin.EncryptReq:
		setting = "encrypt=true"
	case prelogin.EncryptNotSup:
		setting = "encrypt=disable"
	}
	switch {
	case errors.Is(e.Err, ErrServerNoEncryption) && e.Reply.Base() == prelogin.EncryptOff:
		return "the server offers encryption for the login only (it answered ENCRYPTION=OFF) and " + setting +
			" requires every packet encrypted; turn on the server's Force Encryption, or connect with encrypt=false if login-only encryption is acceptable"
	case errors.Is(e.Err, ErrServerNoEncryption):
		return "the server does not support encryption (it answered ENCRYPTION=NOT_SUP) and " + setting +
			" requires it; give the server a certificate and turn on Force Encryption, or connect with encrypt=disable if an unencrypted connection is acceptable"
	case errors.Is(e.Err, ErrServerRequiresEncryption):
		return "the server requires encryption (it answered ENCRYPTION=" + e.Reply.String() + ") and " + setting +
			" refuses it; connect with encrypt=true"
	}
	return ""
}

// dialDetail is the text of a lookup or TCP connect error: for each attempt, the address (when
// several were tried) and the system's reason.
func dialDetail(err error) string {
	var attempts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok { // errors.Join of every attempt's error
		attempts = j.Unwrap()
	}
	if len(attempts) < 2 {
		return reason(err, false)
	}
	parts := make([]string, len(attempts))
	for i, a := range attempts {
		parts[i] = reason(a, true)
	}
	return strings.Join(parts, "; ")
}

// reason is the innermost useful text of a dial error: "connection refused", "no such host",
// with the address first when withAddr.
func reason(err error, withAddr bool) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		r := oe.Err.Error()
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			r = se.Err.Error()
		}
		if withAddr && oe.Addr != nil {
			return oe.Addr.String() + ": " + r
		}
		return r
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Err // the name is the ConnectError's host
	}
	return strings.TrimPrefix(err.Error(), "mssqlbridge: ")
}

// formatDuration formats a phase's duration with about two significant digits: <0.1ms, 0.4ms,
// 12ms, 1.5s.
func formatDuration(d time.Duration) string {
	switch {
	case d < 100*time.Microsecond:
		return "<0.1ms"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
}

// formatBound formats a time bound to a tenth of a second from one second on, to a hundredth
// below (a context's remaining time is measured when the dial starts, a little under what the
// caller gave).
func formatBound(d time.Duration) string {
	unit := 10 * time.Millisecond
	if d >= time.Second {
		unit = 100 * time.Millisecond
	}
	if r := d.Round(unit); r > 0 {
		return r.String()
	}
	return d.String()
}

// notSQLServerError reports a PRELOGIN reply whose first header cannot be TDS: the peer is
// some other server (HTTP, SSH, a TLS-only port, ...). It wraps the reader's error, which
// wraps ErrMalformedReply.
type notSQLServerError struct {
	start []byte // the reply's first bytes (the header the reader refused)
	err   error
}

func (e *notSQLServerError) Error() string {
	s := "mssqlbridge: the peer is not a SQL Server: its reply starts with "
	switch {
	case printable(e.start):
		s += strconv.Quote(string(e.start))
	case e.start[0] == 0x15 || e.start[0] == 0x16: // a TLS alert or handshake record
		s += fmt.Sprintf("[% x], a TLS record (a TLS-only port? TDS 8.0 servers need encrypt=strict)", e.start)
	default:
		s += fmt.Sprintf("[% x]", e.start)
	}
	return s
}

func (e *notSQLServerError) Unwrap() error { return e.err }

// asNotSQLServer returns a *notSQLServerError for a PRELOGIN reply error whose first packet
// header is not a TDS packet's (an unknown type, or text); err unchanged otherwise.
func asNotSQLServer(err error) error {
	var pe *tds.PacketError
	if !errors.As(err, &pe) || !errors.Is(err, ErrMalformedReply) || !pe.Located || pe.StreamOffset != 0 || pe.RawLen == 0 {
		return err
	}
	start := pe.Raw[:pe.RawLen]
	if knownType(start[0]) && !printable(start) {
		return err // a TDS packet, only not the one expected: the reader's words say it best
	}
	return &notSQLServerError{start: append([]byte(nil), start...), err: err}
}

// knownType reports whether b is a TDS packet type (MS-TDS 2.2.3.1.1).
func knownType(b byte) bool {
	switch tds.PacketType(b) {
	case 1, 2, 3, 4, 6, 7, 8, 14, 15, 16, 17, 18:
		return true
	}
	return false
}

// printable reports whether b is printable ASCII (tab, CR and LF allowed).
func printable(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return len(b) > 0
}
