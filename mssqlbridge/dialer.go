package mssqlbridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
)

// dialer is the go-mssqldb HostDialer the connector installs. Being a HostDialer, it receives
// "host:port" with the name unresolved (go-mssqldb resolves names itself only for plain
// Dialers), so the conn knows the name to check the certificate against; it resolves and
// dials itself. Safe for concurrent use.
type dialer struct {
	s *settings
}

// HostName returns the DSN's host.
func (d *dialer) HostName() string { return d.s.host }

// DialContext dials addr. For TCP it returns the bridged conn (in strict mode after the TLS
// handshake, which ctx bounds); other networks (SQL Server Browser's UDP) are dialed as is.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if !strings.HasPrefix(network, "tcp") {
		return d.base().DialContext(ctx, network, addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mssqlbridge: dial %s: %w", addr, err)
	}
	tr := newTrace(ctx, d.s, addr)
	slot := bindsChannel(d.s.authenticator)
	if slot {
		if err := acquireChannelSlot(ctx); err != nil {
			return nil, err
		}
	}
	raw, err := d.dialTCP(ctx, network, addr, host, tr)
	if err != nil {
		if slot {
			abandonChannelSlot()
		}
		return nil, tr.fail(ctx, err)
	}
	tr.connected(raw)
	c := newConn(ctx, raw, d.s, host)
	c.trace = tr
	if slot {
		holdChannelSlot(c) // freed by the provider's call, or when c fails or closes
	}
	if c.strict {
		tr.start(PhaseHandshake)
		if err := c.startStrict(ctx); err != nil {
			releaseChannelSlot(c)
			_ = raw.Close()
			return nil, tr.fail(ctx, err)
		}
		tr.handshakeDone(c.tlsConn)
	}
	return c, nil
}

// base is the dialer that opens sockets: the caller's, or a net.Dialer with the DSN's
// keepalive.
func (d *dialer) base() mssql.Dialer {
	if d.s.dialer != nil {
		return d.s.dialer
	}
	return &net.Dialer{KeepAlive: d.s.keepAlive}
}

// dialTCP opens the TCP connection. With the caller's dialer it passes addr through, the name
// unresolved. Otherwise it resolves the name and dials its addresses as go-mssqldb's own
// dialer does: all at once when MultiSubnetFailover is on (go-mssqldb's default) and the name
// has several, the first to connect winning; else one after another in the resolver's order,
// each attempt bounded only by ctx, until one connects.
// tr times the lookup and the connect.
func (d *dialer) dialTCP(ctx context.Context, network, addr, host string, tr *connTrace) (net.Conn, error) {
	if d.s.dialer != nil || net.ParseIP(host) != nil {
		if d.s.dialer == nil {
			tr.addr = addr
		}
		tr.start(PhaseTCP)
		return d.dialOne(ctx, network, addr)
	}
	tr.start(PhaseLookup)
	_, port, _ := net.SplitHostPort(addr)
	lookup := d.s.lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupIPAddr
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("mssqlbridge: dial %s: %w", addr, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("mssqlbridge: dial %s: no address for %q", addr, host)
	}
	tr.lookedUp(ips, port)
	if len(ips) == 1 || !d.s.multiIP {
		return d.dialSequential(ctx, network, ips, port)
	}
	return d.dialParallel(ctx, network, ips, port)
}

// dialSequential dials ips in order and returns the first connection; when none connects,
// the error joins every attempt's. It stops early when ctx ends.
func (d *dialer) dialSequential(ctx context.Context, network string, ips []net.IPAddr, port string) (net.Conn, error) {
	var errs []error
	for _, ip := range ips {
		c, err := d.dialOne(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func (d *dialer) dialOne(ctx context.Context, network, addr string) (net.Conn, error) {
	raw, err := d.base().DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("mssqlbridge: dial %s: %w", addr, err)
	}
	return raw, nil
}

// dialParallel dials every address at once and returns the first connection; the others are
// closed as they arrive. It returns only when every attempt has ended or one has won and the
// rest have been cancelled and collected, so it leaves no goroutine behind.
func (d *dialer) dialParallel(ctx context.Context, network string, ips []net.IPAddr, port string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		c   net.Conn
		err error
	}
	results := make(chan result, len(ips))
	for _, ip := range ips {
		go func(addr string) {
			c, err := d.dialOne(ctx, network, addr)
			results <- result{c, err}
		}(net.JoinHostPort(ip.String(), port))
	}
	var (
		winner net.Conn
		errs   []error
	)
	for range ips {
		r := <-results
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case winner == nil:
			winner = r.c
			cancel()
		default:
			_ = r.c.Close()
		}
	}
	if winner == nil {
		return nil, errors.Join(errs...)
	}
	return winner, nil
}
