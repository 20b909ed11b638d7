package mssqlbridge

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// boundSlack is how much earlier than the dial timeout a context's deadline must end for the
// context, not the dial timeout, to be named as the bound that ended an attempt: go-mssqldb
// puts the dial timeout in the context it gives the dialer a moment before calling it.
const boundSlack = 250 * time.Millisecond

// connTrace follows one connection attempt through its phases: it times each, logs each
// when the connector has a logger (see logging.go), and turns a failure into a
// *ConnectError. It is used by the dial's goroutine, then by the conn's Writes (wmu held),
// never concurrently. A nil *connTrace (a conn built without the dialer) does nothing.
type connTrace struct {
	s       *settings
	host    string // "host:port" as dialed
	addr    string // see ConnectError.Addr
	phase   ConnectPhase
	began   time.Time // when phase began
	timings []PhaseTiming
	// exchange is the PRELOGIN's ENCRYPTION values, once preloginDone has them.
	exchange encryptionExchange

	// The bound the dial's context sets, judged at the dial: "context deadline" or "dial
	// timeout", and its length; "" when the context has no deadline.
	ctxBound  string
	ctxWithin time.Duration
}

func newTrace(ctx context.Context, s *settings, host string) *connTrace {
	t := &connTrace{s: s, host: host}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		t.ctxBound, t.ctxWithin = "context deadline", left
		if dt := s.dialTimeout; dt > 0 && left > dt-boundSlack {
			t.ctxBound, t.ctxWithin = "dial timeout", dt
		}
	}
	if s.logger != nil && s.redirected(host) {
		s.logger.LogAttrs(context.Background(), slog.LevelInfo, "mssqlbridge: routing redirect followed",
			slog.String("host", host), slog.String("dsn_host", s.host))
	}
	return t
}

// start begins phase p.
func (t *connTrace) start(p ConnectPhase) {
	if t == nil {
		return
	}
	t.phase, t.began = p, time.Now()
}

// done ends the current phase successfully and logs it with attrs.
func (t *connTrace) done(attrs ...slog.Attr) {
	if t == nil || t.phase == 0 {
		return
	}
	d := t.record()
	if t.s.logger != nil {
		t.logPhase(d, attrs)
	}
	t.phase = 0
}

// record appends the current phase's timing and returns its duration.
func (t *connTrace) record() time.Duration {
	d := time.Since(t.began)
	t.timings = append(t.timings, PhaseTiming{Phase: t.phase, Duration: d})
	return d
}

// lookedUp ends the lookup, which found ips, and starts the TCP connect to them.
func (t *connTrace) lookedUp(ips []net.IPAddr, port string) {
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip.String(), port)
	}
	t.addr = strings.Join(addrs, ", ")
	t.done(slog.Any("addrs", addrs))
	t.start(PhaseTCP)
}

// connected ends the TCP connect, which reached raw's remote address.
func (t *connTrace) connected(raw net.Conn) {
	if a := raw.RemoteAddr(); a != nil {
		t.addr = a.String()
	}
	t.done()
}

// preloginDone ends PRELOGIN: the client sent sent, the server replied got, which settled
// mode.
func (t *connTrace) preloginDone(sent, got prelogin.Encryption, mode prelogin.Mode) {
	if t == nil {
		return
	}
	t.exchange = encryptionExchange{sent: sent, reply: got, replied: true}
	t.done(slog.String("encryption_sent", sent.String()), slog.String("encryption_reply", got.String()),
		slog.String("mode", mode.String()))
}

// negotiated is called when the driver's PRELOGIN has been answered and mode settled: it ends
// the phase running (the TLS handshake, or PRELOGIN in strict mode, where TLS ran on dial, and
// without TLS) and starts the LOGIN7 send, which lasts until the driver has written its LOGIN7
// message.
func (t *connTrace) negotiated(mode prelogin.Mode, tc *tls.Conn) {
	if t == nil {
		return
	}
	switch {
	case t.phase == PhaseHandshake:
		t.handshakeDone(tc)
	case mode == prelogin.ModeStrict: // preloginDone did not run: no ENCRYPTION to judge
		t.done(slog.String("mode", mode.String()))
	default:
		t.done()
	}
	t.start(PhaseLogin)
}

// handshakeDone ends the TLS handshake of tc.
func (t *connTrace) handshakeDone(tc *tls.Conn) {
	if t == nil || t.s.logger == nil || tc == nil {
		t.done()
		return
	}
	cs := tc.ConnectionState()
	t.done(slog.String("tls_version", tls.VersionName(cs.Version)),
		slog.String("cipher_suite", tls.CipherSuiteName(cs.CipherSuite)),
		slog.String("server_name", cs.ServerName), slog.Bool("resumed", cs.DidResume))
}

// fail ends the attempt with err in the current phase and returns the *ConnectError (err
// itself when it already is one, or when t is nil). ctx is the dial's context, or Background once
// it no longer bounds the attempt.
func (t *connTrace) fail(ctx context.Context, err error) error {
	var ce *ConnectError
	if t == nil || err == nil || errors.As(err, &ce) {
		return err
	}
	if t.phase == 0 {
		t.phase, t.began = PhaseLogin, time.Now()
	}
	t.record()
	ce = &ConnectError{Host: t.host, Addr: t.addr, Phase: t.phase, Timings: t.timings, Err: err}
	ce.explain(t.s, t.exchange)
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		ce.bound, ce.within = t.ctxBound, t.ctxWithin
	case errors.As(err, &ne) && ne.Timeout():
		ce.bound = "deadline"
		if t.phase >= PhasePrelogin && t.s.connTimeout > 0 {
			ce.bound, ce.within = "connection timeout", t.s.connTimeout
		}
	}
	if ce.Phase == PhasePrelogin {
		ce.Err = asNotSQLServer(err)
	}
	t.phase = 0
	if t.s.logger != nil {
		t.s.logger.LogAttrs(context.Background(), slog.LevelWarn, "mssqlbridge: connect failed",
			slog.String("host", ce.Host), slog.String("addr", ce.Addr), slog.String("phase", ce.Phase.key()),
			slog.Any("timings", timingsValue(ce.Timings)), slog.String("error", ce.Error()))
	}
	return ce
}

// traceLogin follows the LOGIN7 send on the conn's Writes after PRELOGIN (wmu held): a Write
// of a LOGIN7 packet that failed (err) fails the attempt; the one that ends the message (EOM)
// ends the phase. Either way, and on any Write of another packet type (the conn used other
// than by the driver), the trace is then dropped. It returns the error the Write reports.
func (c *conn) traceLogin(p []byte, err error) error {
	if len(p) < 2 || tds.PacketType(p[0]) != tds.TypeLogin7 {
		c.trace = nil
		return err
	}
	if err != nil {
		err = c.trace.fail(context.Background(), err) // the dial's context no longer bounds it
		c.trace = nil
		return err
	}
	if len(p) > 1 && p[1]&byte(tds.StatusEOM) != 0 {
		c.trace.done()
		c.trace = nil
	}
	return nil
}
