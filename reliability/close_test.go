package reliability

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// driverPrelogin is a PRELOGIN packet as go-mssqldb sends it with its own encryption disabled
// (the connector's conn replaces the ENCRYPTION value with the user's).
func driverPrelogin() []byte {
	return Packet(tds.TypePrelogin, tds.StatusEOM, PreloginPayload(prelogin.EncryptNotSup), 0)
}

// dialConnector returns the net.Conn the bridged connector gives go-mssqldb for dsn, dialed
// through the connector's own Dialer, so that tests can drive it as the driver would.
func dialConnector(t *testing.T, dsn, addr string) net.Conn {
	t.Helper()
	c, err := mssqlbridge.NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Dialer.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return conn
}

// TestCloseTwice: a second Close on every closer of the stack is harmless: no panic, and where
// the type documents it, an error matching net.ErrClosed.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	dsn := s.DSN("encrypt=true", "certificate="+s.CAFile())
	tests := []struct {
		name       string
		open       func(t *testing.T) io.Closer
		wantClosed bool // the second Close returns net.ErrClosed (otherwise nil is fine too)
	}{
		{"bridge.Conn", func(t *testing.T) io.Closer {
			raw, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			return bridge.New(raw, bridge.Options{})
		}, true},
		{"bridge-over-tls", func(t *testing.T) io.Closer {
			bs := bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) { _, _ = io.Copy(io.Discard, tc) })
			c, err := dialBridge(context.Background(), bs.Addr, clientTLS(t), bridge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return c.tc
		}, true},
		{"mssqlbridge-conn-new", func(t *testing.T) io.Closer {
			return dialConnector(t, dsn, s.Addr)
		}, true},
		{"mssqlbridge-conn-full", func(t *testing.T) io.Closer {
			c := dialConnector(t, dsn, s.Addr)
			if _, err := c.Write(driverPrelogin()); err != nil {
				t.Fatalf("PRELOGIN: %v", err)
			}
			return c
		}, true},
		{"sql.DB", func(t *testing.T) io.Closer {
			db := openBridged(t, dsn)
			if err := db.Ping(); err != nil {
				t.Fatal(err)
			}
			return db
		}, false},
		{"tdstest.Server", func(t *testing.T) io.Closer {
			srv, err := tdstest.NewServer(tdstest.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return srv
		}, true},
		{"Proxy", func(t *testing.T) io.Closer {
			p, err := NewProxy(s.Addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
		{"ScriptServer", func(t *testing.T) io.Closer {
			ss, err := NewScriptServer(func(net.Conn) {})
			if err != nil {
				t.Fatal(err)
			}
			return ss
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.open(t)
			if err := c.Close(); err != nil {
				t.Fatalf("first Close: %v", err)
			}
			err := c.Close()
			if tt.wantClosed && !errors.Is(err, net.ErrClosed) {
				t.Errorf("second Close: %v, want an error matching net.ErrClosed", err)
			}
		})
	}
}

// TestConnectorCloseDuringHandshake: the connector's conn runs the PRELOGIN exchange and the
// TLS handshake inside the driver's first Write; a server that stalls there keeps the Write
// blocked until Close, which must end it with an error matching net.ErrClosed.
func TestConnectorCloseDuringHandshake(t *testing.T) {
	t.Parallel()
	for _, at := range []tdstest.Phase{tdstest.PhasePrelogin, tdstest.PhaseHandshake} {
		t.Run(at.String(), func(t *testing.T) {
			t.Parallel()
			s := startTDS(t, tdstest.Config{Faults: tdstest.Faults{At: at, Action: tdstest.ActionStall}})
			c := dialConnector(t, s.DSN("encrypt=true", "certificate="+s.CAFile()), s.Addr)
			done := make(chan error, 1)
			go func() {
				_, err := c.Write(driverPrelogin())
				done <- err
			}()
			time.Sleep(100 * time.Millisecond) // let the Write reach the stalled exchange
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			err := within(t, "Write after Close", func() error { return <-done })
			checkErr(t, err, []error{net.ErrClosed})
		})
	}
}

// TestConnectorCloseDuringBlockedRead: after the PRELOGIN exchange and the TLS handshake, a Read
// of the connector's conn waits for the server (which waits for LOGIN7); Close ends it with
// an error matching net.ErrClosed.
func TestConnectorCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	c := dialConnector(t, s.DSN("encrypt=true", "certificate="+s.CAFile()), s.Addr)
	if _, err := c.Write(driverPrelogin()); err != nil {
		t.Fatalf("PRELOGIN: %v", err)
	}
	// The patched PRELOGIN reply comes first; read it whole.
	rd := tds.NewReader(c, tds.ReaderConfig{})
	if _, payload, err := rd.ReadMessage(); err != nil {
		t.Fatalf("PRELOGIN reply: %v", err)
	} else if e, err := prelogin.EncryptionOf(payload); err != nil || e != prelogin.EncryptNotSup {
		t.Fatalf("reply to the driver says %v (%v), want NOT_SUP", e, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := within(t, "Read after Close", func() error { return <-done })
	checkErr(t, err, []error{net.ErrClosed})
}
