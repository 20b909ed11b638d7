package reliability

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// driverPrelogin is a PRELOGIN packet as go-mssqldb sends it with its own encryption disabled
// (the connector's conn replaces the ENCRYPTION value with the user's).
func driverPrelogin() []byte {
	return wiretest.Packet(tds.TypePrelogin, tds.StatusEOM, wiretest.PreloginPayload(prelogin.EncryptNotSup), 0)
}

// dialConnector returns the net.Conn the bridged connector gives go-mssqldb for dsn, dialed
// through the connector's own Dialer, so that tests can drive it as the driver would.
func dialConnector(t *testing.T, dsn, addr string) net.Conn {
	t.Helper()
	return dialConnectorWith(t, dsn, addr, nil)
}

// dialConnectorWith is dialConnector with wrap (if not nil) applied to the socket.
func dialConnectorWith(t *testing.T, dsn, addr string, wrap func(net.Conn) net.Conn) net.Conn {
	t.Helper()
	var opts []mssqlbridge.Option
	if wrap != nil {
		opts = append(opts, mssqlbridge.WithDialer(dialerFunc(func(ctx context.Context, _, a string) (net.Conn, error) {
			var d net.Dialer
			raw, err := d.DialContext(ctx, "tcp", a)
			if err != nil {
				return nil, err
			}
			return wrap(raw), nil
		})))
	}
	c, err := mssqlbridge.NewConnector(dsn, opts...)
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
			p, err := wiretest.NewProxy(s.Addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
		{"ScriptServer", func(t *testing.T) io.Closer {
			ss, err := wiretest.NewScriptServer(func(net.Conn) {})
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

// TestCloseStalledPeer: Close must not wait on a server that has stopped reading. The
// connector's conn sends a TLS close_notify on Close in full encryption; when the socket's
// send buffer is full, crypto/tls waits up to 5 s (its own write deadline) for that alert to
// go out. database/sql closes a broken connection on the goroutine of the failing query, so the
// query's error would come seconds late. A full send buffer is simulated by a conn whose
// Writes block until their deadline once the test says so (what the kernel does when the
// buffer is full; a real fill leaves room for a small alert more often than not).
func TestCloseStalledPeer(t *testing.T) {
	t.Parallel()
	s := startTDS(t, tdstest.Config{})
	var sc *stallConn
	conn := dialConnectorWith(t, s.DSN("encrypt=true", "certificate="+s.CAFile()), s.Addr,
		func(c net.Conn) net.Conn { sc = &stallConn{Conn: c, closed: make(chan struct{})}; return sc })
	if _, err := conn.Write(driverPrelogin()); err != nil {
		t.Fatalf("PRELOGIN: %v", err)
	}
	sc.stalled.Store(true)
	start := time.Now()
	err := within(t, "Close", conn.Close)
	d := time.Since(start)
	t.Logf("Close: %v, after %v", err, d.Round(time.Millisecond))
	if d > 2*time.Second {
		t.Errorf("Close took %v against a server that stopped reading", d.Round(time.Millisecond))
	}
}

// stallConn is a net.Conn whose Writes, once stalled is set, block until the write deadline
// (then fail with a timeout) or Close, as Writes on a socket whose send buffer is full do.
type stallConn struct {
	net.Conn
	stalled atomic.Bool
	closed  chan struct{} // closed by Close
	once    sync.Once

	mu  sync.Mutex
	wdl time.Time // the write deadline
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *stallConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *stallConn) Write(p []byte) (int, error) {
	if !c.stalled.Load() {
		return c.Conn.Write(p)
	}
	c.mu.Lock()
	dl := c.wdl
	c.mu.Unlock()
	var expired <-chan time.Time
	if !dl.IsZero() {
		timer := time.NewTimer(time.Until(dl))
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-expired:
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded}
	case <-c.closed:
		return 0, net.ErrClosed
	}
}

func (c *stallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
