package mssqlbridge

import (
	"bytes"
	"context"
	"database/sql"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/integratedauth"
	"github.com/microsoft/go-mssqldb/msdsn"
	"github.com/tdsbridge/tdsbridge/prelogin"
)

// bindingRecorder is an integrated-authentication provider whose authenticators record the
// channel bindings they are given, as go-mssqldb's NTLM authenticator would use them.
type bindingRecorder struct {
	mu       sync.Mutex
	created  int
	bindings []*integratedauth.ChannelBindings
}

func (r *bindingRecorder) GetIntegratedAuthenticator(msdsn.Config) (integratedauth.IntegratedAuthenticator, error) {
	r.mu.Lock()
	r.created++
	r.mu.Unlock()
	return &recordingAuth{r: r}, nil
}

func (r *bindingRecorder) snapshot() (int, []*integratedauth.ChannelBindings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created, append([]*integratedauth.ChannelBindings(nil), r.bindings...)
}

type recordingAuth struct{ r *bindingRecorder }

func (a *recordingAuth) InitialBytes() ([]byte, error) {
	return []byte("NTLMSSP\x00\x01\x00\x00\x00"), nil
}
func (a *recordingAuth) NextBytes([]byte) ([]byte, error) { return nil, nil }
func (a *recordingAuth) Free()                            {}
func (a *recordingAuth) SetChannelBinding(cb *integratedauth.ChannelBindings) {
	a.r.mu.Lock()
	a.r.bindings = append(a.r.bindings, cb)
	a.r.mu.Unlock()
}

var (
	registerRecorder sync.Once
	recorder         = &bindingRecorder{}
)

const recorderName = "mssqlbridge-test-channel-binding"

// TestChannelBinding: connections opened at once through a connector whose authenticator is
// a RegisterChannelBindingProvider provider each give their authenticator the tls-unique
// bindings of their own TLS connection, as the server computed them; with "epa enabled"
// off, none; outside the bridge the provider refuses with a clear error.
func TestChannelBinding(t *testing.T) {
	registerRecorder.Do(func() {
		if err := RegisterChannelBindingProvider(recorderName, recorder); err != nil {
			t.Fatal(err)
		}
	})
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOn, false)
	user := url.UserPassword(`DOMAIN\user`, "pw")
	dsn := func(epa string) string {
		return "sqlserver://" + user.String() + "@" + srv.addr() + "?encrypt=true&certificate=" + url.QueryEscape(pki.caFile) +
			"&hostNameInCertificate=localhost&authenticator=" + recorderName + "&epa+enabled=" + epa + "&dial+timeout=20"
	}

	created0, bindings0 := recorder.snapshot()
	const n = 6
	c, err := NewConnector(dsn("true"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if conn, err := db.Conn(ctx); err == nil { // the fake server cannot log in
				_ = conn.Close()
			}
		}()
	}
	wg.Wait()
	created, bindings := recorder.snapshot()
	created, bindings = created-created0, bindings[len(bindings0):]
	srv.mu.Lock()
	unique := append([][]byte(nil), srv.unique...)
	srv.mu.Unlock()
	if created < n || len(bindings) != created || len(unique) != created {
		t.Fatalf("%d authenticators, %d given bindings, %d TLS connections; want %d or more of each, all equal", created, len(bindings), len(unique), n)
	}
	seen := make(map[string]bool)
	for _, cb := range bindings {
		data, ok := bytes.CutPrefix(cb.ApplicationData, []byte(integratedauth.TLS_UNIQUE_PREFIX))
		if cb.Type != integratedauth.ChannelBindingsTypeTLSUnique || !ok || len(data) == 0 {
			t.Fatalf("binding %+v: want tls-unique", cb)
		}
		if seen[string(data)] {
			t.Fatalf("two authenticators got the bindings of one connection: %x", data)
		}
		seen[string(data)] = true
	}
	for _, u := range unique {
		if !seen[string(u)] {
			t.Fatalf("the server's tls-unique %x was given to no authenticator", u)
		}
	}

	t.Run("epa disabled", func(t *testing.T) {
		created0, bindings0 := recorder.snapshot()
		db, err := bridgedDB(t, dsn("false"))
		if err != nil {
			t.Fatal(err)
		}
		_ = db.Ping()
		created, bindings := recorder.snapshot()
		if created == created0 || len(bindings) != len(bindings0) {
			t.Fatalf("%d authenticators, %d bindings: want some authenticators and no bindings", created-created0, len(bindings)-len(bindings0))
		}
	})
	t.Run("not bridged", func(t *testing.T) {
		c, err := mssql.NewConnector(dsn("true"))
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(c)
		defer db.Close()
		err = db.Ping()
		if err == nil || !strings.Contains(err.Error(), "not bridged") {
			t.Fatalf("err = %v, want the provider's refusal outside the bridge", err)
		}
	})
}

// TestConnConnectionState: the conn reports its TLS state once negotiated, the zero value
// before, and its tls-unique is the server's.
func TestConnConnectionState(t *testing.T) {
	pki := newTestPKI(t)
	srv := newFakeServer(t, pki, prelogin.EncryptOn, false)
	c, err := dialTest(t, testSettings(t, pki, msdsn.EncryptionRequired), srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := c.ConnectionState(); st.HandshakeComplete {
		t.Fatal("handshake complete before the PRELOGIN")
	}
	if _, err := c.Write(clientPrelogin()); err != nil {
		t.Fatal(err)
	}
	st := c.ConnectionState()
	var unique [][]byte
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		// The server records its state after its side of the handshake returns.
		srv.mu.Lock()
		unique = append([][]byte(nil), srv.unique...)
		srv.mu.Unlock()
		if len(unique) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if !st.HandshakeComplete || len(unique) != 1 || !bytes.Equal(st.TLSUnique, unique[0]) {
		t.Fatalf("state %+v; server tls-unique %x", st, unique)
	}
}
