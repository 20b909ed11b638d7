package reliability

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/bridge"
	"github.com/tdsbridge/tdsbridge/internal/wiretest"
	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// maxRecordWire is the most bytes one TLS record takes on the wire.
const maxRecordWire = 5 + 16384 + 2048

// flood writes 16 KiB records on tc until a Write fails to complete within a second (the
// peer has stopped reading and every buffer on the way is full) and returns the plaintext
// bytes written.
func flood(tc *tls.Conn) int64 {
	chunk := pattern("flood", 16<<10)
	var n int64
	for {
		_ = tc.SetWriteDeadline(time.Now().Add(time.Second))
		m, err := tc.Write(chunk)
		n += int64(m)
		if err != nil {
			return n
		}
	}
}

// floodServer is a bridge server that floods the client and reports the bytes written once a
// Write has blocked for a second.
func floodServer(t *testing.T, written chan<- int64) *wiretest.ScriptServer {
	return bridgeServer(t, func(tc *tls.Conn, _ *bridge.Conn) {
		written <- flood(tc)
		_, _ = io.Copy(io.Discard, tc)
	})
}

// TestBackpressureClientStopsReading: a client that stops reading holds at most its read-ahead
// buffer: while the server keeps writing until its Writes block, the bytes the client took
// from the socket stay within what the application read, plus the read-ahead buffer, plus a
// record or two in the TLS layer. Everything else waits in the kernel's socket buffers, and
// TCP stops the server.
func TestBackpressureClientStopsReading(t *testing.T) {
	t.Parallel()
	const consumed = 64 << 10 // what the application reads before it stops
	t.Run("bridge", func(t *testing.T) {
		t.Parallel()
		written := make(chan int64, 1)
		s := floodServer(t, written)
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		defer cancel()
		c, err := dialBridge(ctx, s.Addr, clientTLS(t), bridge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.b.Close()
		handshake := c.raw.BytesRead()
		_ = c.b.SetReadDeadline(time.Now().Add(hangBound))
		if _, err := io.ReadFull(c.r, make([]byte, consumed)); err != nil {
			t.Fatal(err)
		}
		var w int64
		if err := within(t, "server blocked", func() error { w = <-written; return nil }); err != nil {
			t.Fatal(err)
		}
		read := c.raw.BytesRead() - handshake
		bound := int64(consumed + bridge.DefaultReadAheadSize + 2*maxRecordWire)
		t.Logf("client stopped after %s of plaintext: it read %s from the socket (bound %s) while the server wrote %s before blocking",
			describe(consumed), describe(read), describe(bound), describe(w))
		if read > bound {
			t.Errorf("client read %s from the socket, more than %s", describe(read), describe(bound))
		}
		if w < 4*bound {
			t.Errorf("server wrote only %s before blocking: the test did not push hard enough", describe(w))
		}
	})
	t.Run("connector", func(t *testing.T) {
		t.Parallel()
		written := make(chan int64, 1)
		s := preloginFloodServer(t, written)
		var cc *wiretest.CountingConn
		conn := dialConnectorVia(t, s.Addr, func(c net.Conn) net.Conn { cc = wiretest.NewCountingConn(c); return cc })
		defer conn.Close()
		if _, err := conn.Write(driverPrelogin()); err != nil {
			t.Fatalf("PRELOGIN: %v", err)
		}
		handshake := cc.BytesRead()
		_ = conn.SetReadDeadline(time.Now().Add(hangBound))
		if _, err := io.ReadFull(conn, make([]byte, consumed)); err != nil {
			t.Fatal(err)
		}
		var w int64
		if err := within(t, "server blocked", func() error { w = <-written; return nil }); err != nil {
			t.Fatal(err)
		}
		read := cc.BytesRead() - handshake
		// The driver reads the tls.Conn directly: no read-ahead sits above the bridge's.
		bound := int64(consumed + bridge.DefaultReadAheadSize + 2*maxRecordWire)
		t.Logf("driver stopped after %s: the connector read %s from the socket (bound %s) while the server wrote %s before blocking",
			describe(consumed), describe(read), describe(bound), describe(w))
		if read > bound {
			t.Errorf("connector read %s from the socket, more than %s", describe(read), describe(bound))
		}
		// The bound proves something only if the server pushed far more than the client took:
		// its Writes blocked on full kernel buffers, not because it ran out of data.
		if w < 4*bound || w < 4*read {
			t.Errorf("server wrote only %s before blocking (client read %s, bound %s): the test did not push hard enough",
				describe(w), describe(read), describe(bound))
		}
	})
}

// preloginFloodServer answers a PRELOGIN with ENCRYPTION ON, runs the TLS handshake inside
// PRELOGIN packets and floods the client.
func preloginFloodServer(t *testing.T, written chan<- int64) *wiretest.ScriptServer {
	cfg := serverTLS(t)
	return scriptServer(t, func(c net.Conn) {
		if _, err := wiretest.ReadClientPrelogin(c); err != nil {
			return
		}
		if _, err := c.Write(wiretest.PreloginReply(prelogin.EncryptOn)); err != nil {
			return
		}
		b := bridge.New(c, bridge.Options{Role: bridge.RoleServer})
		tc := tls.Server(b, cfg)
		if err := tc.Handshake(); err != nil || b.StartPassthrough() != nil {
			return
		}
		written <- flood(tc)
		_, _ = io.Copy(io.Discard, tc)
	})
}

// dialConnectorVia returns the connector's conn for a server at addr (encrypt=true, trusting
// the test certificate), with wrap applied to the socket.
func dialConnectorVia(t *testing.T, addr string, wrap func(net.Conn) net.Conn) net.Conn {
	t.Helper()
	c, err := mssqlbridge.NewConnector("sqlserver://sa:pw@"+addr+"?encrypt=true&TrustServerCertificate=true",
		mssqlbridge.WithDialer(dialerFunc(func(ctx context.Context, network, a string) (net.Conn, error) {
			var d net.Dialer
			raw, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return wrap(raw), nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Dialer.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

type dialerFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// silentServer answers PRELOGIN (when prelogin is set: ENCRYPTION ON), runs the TLS handshake
// inside PRELOGIN packets and then never reads again, until release is closed.
func silentServer(t *testing.T, sendReply bool, release <-chan struct{}) *wiretest.ScriptServer {
	cfg := serverTLS(t)
	return scriptServer(t, func(c net.Conn) {
		if sendReply {
			if _, err := wiretest.ReadClientPrelogin(c); err != nil {
				return
			}
			if _, err := c.Write(wiretest.PreloginReply(prelogin.EncryptOn)); err != nil {
				return
			}
		}
		b := bridge.New(c, bridge.Options{Role: bridge.RoleServer})
		tc := tls.Server(b, cfg)
		if err := tc.Handshake(); err != nil || b.StartPassthrough() != nil {
			return
		}
		<-release
	})
}

// writeUntilBlocked writes p on w until a Write fails, with a write deadline one second away,
// and returns the bytes accepted and the error.
func writeUntilBlocked(w net.Conn, p []byte) (int64, error) {
	_ = w.SetWriteDeadline(time.Now().Add(time.Second))
	var n int64
	for {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
}

// TestBackpressureServerStopsReading: against a server that stops reading, Write blocks once
// the socket buffers are full, and the write deadline ends it with a timeout. Nothing is
// buffered above the socket: every plaintext byte a Write accepted reached the socket.
func TestBackpressureServerStopsReading(t *testing.T) {
	t.Parallel()
	t.Run("bridge", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		s := silentServer(t, false, release)
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		defer cancel()
		c, err := dialBridge(ctx, s.Addr, clientTLS(t), bridge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.b.Close()
		before := c.raw.BytesWritten()
		var accepted int64
		err = within(t, "blocked Write", func() error {
			var err error
			accepted, err = writeUntilBlocked(c.tc, pattern("write", 16<<10))
			return err
		})
		onWire := c.raw.BytesWritten() - before
		t.Logf("server stopped reading: Write accepted %s of plaintext (%s on the socket) before blocking; then: %v",
			describe(accepted), describe(onWire), err)
		checkErr(t, err, []error{os.ErrDeadlineExceeded})
		if !isTimeout(err) {
			t.Errorf("error %q is not a net.Error timeout", err)
		}
		if onWire < accepted {
			t.Errorf("Write accepted %s but only %s reached the socket: something buffers above it", describe(accepted), describe(onWire))
		}
	})
	t.Run("connector", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		s := silentServer(t, true, release)
		var cc *wiretest.CountingConn
		conn := dialConnectorVia(t, s.Addr, func(c net.Conn) net.Conn { cc = wiretest.NewCountingConn(c); return cc })
		// The server goes first: the conn's Close sends a close_notify, which would wait for
		// the full socket buffers (see TestCloseStalledPeer).
		defer func() {
			close(release)
			_ = conn.Close()
		}()
		if _, err := conn.Write(driverPrelogin()); err != nil {
			t.Fatalf("PRELOGIN: %v", err)
		}
		before := cc.BytesWritten()
		pkt := wiretest.Packet(tds.TypeSQLBatch, tds.StatusEOM, pattern("batch", tds.DefaultPacketSize-tds.HeaderSize), 0)
		var accepted int64
		err := within(t, "blocked Write", func() error {
			var err error
			accepted, err = writeUntilBlocked(conn, pkt)
			return err
		})
		onWire := cc.BytesWritten() - before
		t.Logf("server stopped reading: the connector's Write accepted %s of packets (%s on the socket) before blocking; then: %v",
			describe(accepted), describe(onWire), err)
		if !isTimeout(err) && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("error %q is not a timeout", err)
		}
		if onWire < accepted {
			t.Errorf("Write accepted %s but only %s reached the socket", describe(accepted), describe(onWire))
		}
	})
}
