package mssqlbridge

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// WithLogger makes connections report what happened to l:
//
//   - one event per phase of each connection attempt, at level Debug, with the message
//     "mssqlbridge: " and the phase's name ("mssqlbridge: TLS handshake"; the LOGIN7 send's
//     is "mssqlbridge: LOGIN7 send") and the attributes host ("host:port" as dialed), addr
//     (the address connected to), phase and took (its duration); the lookup adds addrs (the
//     addresses found), PRELOGIN adds encryption_sent, encryption_reply and mode (the
//     [prelogin.Mode] negotiated, as its String spells it: "full", "strict", ...), the TLS
//     handshake adds tls_version, cipher_suite, server_name (the SNI sent; empty for an IP
//     address) and resumed;
//   - "mssqlbridge: connect failed", at level Warn, with host, addr, phase, timings and error
//     (the *ConnectError's text);
//   - "mssqlbridge: routing redirect followed", at level Info, when the driver dials another
//     host than the DSN's (a routing redirect, or the failover partner), with host and
//     dsn_host;
//   - "mssqlbridge: dead connection", at level Info, when an idle connection is found dead
//     before it is used, with host, addr, idle and error.
//
// No event carries a secret: no password, token, key or LOGIN7 byte. Events are logged
// synchronously from the goroutine that connects (or uses) the connection; l's handler must
// be safe for concurrent use, as slog handlers are. A nil l (the default) logs nothing, at the
// cost of a nil check per phase.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// logPhase logs the end of t's current phase, which took d. Called only with a logger.
func (t *connTrace) logPhase(d time.Duration, attrs []slog.Attr) {
	all := make([]slog.Attr, 0, 4+len(attrs))
	all = append(all, slog.String("host", t.host), slog.String("addr", t.addr),
		slog.String("phase", t.phase.key()), slog.Duration("took", d))
	all = append(all, attrs...)
	t.s.logger.LogAttrs(context.Background(), slog.LevelDebug, "mssqlbridge: "+t.phase.String(), all...)
}

// logDeadConn logs that the connection to host (as dialed) at addr, idle for idle, was found
// dead before use, because of cause (see conn.checkAlive). It does nothing without a logger.
func (s *settings) logDeadConn(host, addr string, idle time.Duration, cause error) {
	if s.logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("host", host), slog.String("addr", addr), slog.Duration("idle", idle)}
	if cause != nil {
		attrs = append(attrs, slog.String("error", cause.Error()))
	}
	s.logger.LogAttrs(context.Background(), slog.LevelInfo, "mssqlbridge: dead connection", attrs...)
}

// redirected reports whether host ("host:port", as dialed) is not the DSN's host: the
// driver follows a routing redirect (or dials the failover partner).
func (s *settings) redirected(host string) bool {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	if !strings.EqualFold(h, s.host) {
		return true
	}
	return s.port != 0 && port != strconv.FormatUint(s.port, 10)
}

// timingsValue is a ConnectError's timings as a log attribute value: "tcp=0.4ms ...".
func timingsValue(ts []PhaseTiming) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Phase.key() + "=" + formatDuration(t.Duration)
	}
	return strings.Join(parts, " ")
}
