package mssqlbridge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"

	"github.com/microsoft/go-mssqldb/integratedauth"
	"github.com/microsoft/go-mssqldb/msdsn"
)

// Channel binding (Extended Protection) through the bridge.
//
// go-mssqldb computes channel bindings only from a TLS connection of its own (MS-TDS 2.2.6.4:
// the SSPI data of LOGIN7; RFC 5929 tls-unique), and hands them to its integrated
// authenticator between the PRELOGIN exchange and LOGIN7, on the goroutine that dialed. The
// authenticator is created by a provider from the connection's msdsn.Config alone, which
// says nothing about which connection it is for. RegisterChannelBindingProvider closes that
// gap without changing go-mssqldb: the bridged dialer, for a connector whose authenticator is
// such a provider, holds a process-wide slot from the dial to the provider's call, so that the
// provider's call is the one for the conn in the slot (the dial, the PRELOGIN exchange and the
// provider's call run one after another on the driver's connecting goroutine; no other
// bridged conn for such a provider can be dialed meanwhile). The provider takes the conn's
// TLS state from the slot, computes the bindings as go-mssqldb does
// (integratedauth.GenerateCBTFromTLSConnState), gives them to the authenticator and frees the
// slot. The slot is also freed when the conn fails or closes first, and a dial waits for it at
// most until its context ends: connection set-up (dial, PRELOGIN, TLS handshake) for such
// connectors is serialized, the login itself is not.

// cbSlot is the process-wide channel-binding slot.
var cbSlot = struct {
	sem chan struct{} // holds one token while a conn is in the slot

	mu        sync.Mutex
	pending   *conn                              // the conn whose provider call is due; guarded by mu
	providers map[string]integratedauth.Provider // registered names -> wrapped providers; guarded by mu
}{sem: make(chan struct{}, 1)}

// RegisterChannelBindingProvider registers, under name, an integrated-authentication provider
// that gives the authenticators of inner (for example go-mssqldb's ntlm.AuthProvider, or
// winsspi's) the channel bindings of the bridge's TLS connection, as go-mssqldb gives them
// those of its own TLS. Select it with the DSN parameter authenticator=name, and set
// "epa enabled=true" as for go-mssqldb's own TLS: without it no bindings are given. Bindings
// exist for TLS 1.2 (tls-unique), in full and login-only encryption; for TLS 1.3 (strict mode,
// tlsmin=1.3) go-mssqldb itself computes none, and neither does the bridge.
//
// Call it at initialization, before connections are made (go-mssqldb's registry is not
// synchronized), with a name of your own: a provider already registered under name is
// replaced. The provider works only under this package's connectors and Dialers: created for any other
// connection it returns an error saying so.
func RegisterChannelBindingProvider(name string, inner integratedauth.Provider) error {
	if inner == nil {
		return errors.New("mssqlbridge: RegisterChannelBindingProvider: nil provider")
	}
	p := integratedauth.ProviderFunc(func(cfg msdsn.Config) (integratedauth.IntegratedAuthenticator, error) {
		return bindAuthenticator(cfg, inner)
	})
	if err := integratedauth.SetIntegratedAuthenticationProvider(name, p); err != nil {
		return fmt.Errorf("mssqlbridge: RegisterChannelBindingProvider %q: %w", name, err)
	}
	cbSlot.mu.Lock()
	defer cbSlot.mu.Unlock()
	if cbSlot.providers == nil {
		cbSlot.providers = make(map[string]integratedauth.Provider)
	}
	cbSlot.providers[name] = p
	return nil
}

// bindsChannel reports whether connections whose DSN names authenticator use a provider
// registered by RegisterChannelBindingProvider.
func bindsChannel(authenticator string) bool {
	if authenticator == "" {
		return false
	}
	cbSlot.mu.Lock()
	defer cbSlot.mu.Unlock()
	_, ok := cbSlot.providers[authenticator]
	return ok
}

// acquireChannelSlot waits for the slot, at most until ctx ends.
func acquireChannelSlot(ctx context.Context) error {
	select {
	case cbSlot.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mssqlbridge: dial: waiting for the channel-binding slot: %w", ctx.Err())
	}
}

// holdChannelSlot puts c, dialed while holding the slot, into it.
func holdChannelSlot(c *conn) {
	cbSlot.mu.Lock()
	cbSlot.pending = c
	cbSlot.mu.Unlock()
}

// releaseChannelSlot frees the slot if c holds it (c failed or closed before the provider's
// call). Safe to call for any conn, any number of times.
func releaseChannelSlot(c *conn) {
	cbSlot.mu.Lock()
	defer cbSlot.mu.Unlock()
	if cbSlot.pending == c && c != nil {
		cbSlot.pending = nil
		<-cbSlot.sem
	}
}

// abandonChannelSlot frees a slot acquired by a dial that produced no conn.
func abandonChannelSlot() { <-cbSlot.sem }

// takeChannelSlot returns the conn in the slot and frees it; nil when empty.
func takeChannelSlot() *conn {
	cbSlot.mu.Lock()
	defer cbSlot.mu.Unlock()
	c := cbSlot.pending
	if c != nil {
		cbSlot.pending = nil
		<-cbSlot.sem
	}
	return c
}

// bindAuthenticator creates inner's authenticator for cfg and gives it the channel bindings of
// the conn in the slot, when cfg enables them and the conn runs TLS 1.2.
func bindAuthenticator(cfg msdsn.Config, inner integratedauth.Provider) (integratedauth.IntegratedAuthenticator, error) {
	c := takeChannelSlot()
	if c == nil {
		return nil, errors.New("mssqlbridge: channel-binding authenticator used on a connection that is not bridged (use mssqlbridge.NewConnector or a mssqlbridge.Dialer)")
	}
	auth, err := inner.GetIntegratedAuthenticator(cfg)
	if err != nil || auth == nil || !cfg.EpaEnabled || c.tlsConn == nil {
		return auth, err
	}
	cbt, err := integratedauth.GenerateCBTFromTLSConnState(c.tlsConn.ConnectionState())
	if err != nil {
		auth.Free()
		return nil, fmt.Errorf("mssqlbridge: channel bindings: %w", err)
	}
	if epa, ok := auth.(integratedauth.AuthenticatorWithEPA); ok && cbt != nil {
		epa.SetChannelBinding(cbt)
	}
	return auth, nil
}

// ConnectionState returns the state of the conn's TLS connection, as (*tls.Conn).ConnectionState
// does: the zero value until the TLS handshake is done, and without TLS. It is what a host
// driver needs to compute channel bindings itself (see docs/channel-binding.md); safe for
// concurrent use.
func (c *conn) ConnectionState() tls.ConnectionState {
	select {
	case <-c.ready:
	default:
		if !c.strict { // strict: tlsConn is set at dial, before the conn is returned
			return tls.ConnectionState{}
		}
	}
	if c.tlsConn == nil {
		return tls.ConnectionState{}
	}
	return c.tlsConn.ConnectionState()
}
