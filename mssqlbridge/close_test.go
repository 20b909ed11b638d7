package mssqlbridge

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// TestReadAfterClose: once Close has returned, a Read fails at once with net.ErrClosed even
// when the bridge or crypto/tls still hold bytes of a response, and a Read blocked on the
// socket returns with the same error: go-mssqldb may give a closed connection's read buffer to
// another connection while its reader goroutine still runs, and that reader must not copy
// another byte into it.
func TestReadAfterClose(t *testing.T) {
	pki := newTestPKI(t)
	for _, tc := range []struct {
		name   string
		client msdsn.Encryption
		server prelogin.Encryption
	}{
		{"plaintext", msdsn.EncryptionDisabled, prelogin.EncryptNotSup},
		{"login-only", msdsn.EncryptionOff, prelogin.EncryptOff},
		{"full", msdsn.EncryptionRequired, prelogin.EncryptOn},
	} {
		t.Run(tc.name+"/bytes held", func(t *testing.T) {
			c := loggedIn(t, pki, tc.client, tc.server)
			// The echo of a 30000-byte packet: read 8 bytes of it, the rest stays read ahead.
			if _, err := c.Write(packet(tds.TypeSQLBatch, bytes.Repeat([]byte("r"), 30000))); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // the rest of the echo reaches the client
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			n, err := c.Read(make([]byte, 64<<10))
			if n != 0 || !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Read after Close: %d bytes, %v; want 0, net.ErrClosed", n, err)
			}
			if _, err := c.Write(packet(tds.TypeSQLBatch, []byte("x"))); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Write after Close: %v; want net.ErrClosed", err)
			}
		})
		t.Run(tc.name+"/read blocked", func(t *testing.T) {
			c := loggedIn(t, pki, tc.client, tc.server)
			done := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 8)) // the server sends nothing
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("blocked Read: %v; want net.ErrClosed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not unblock the Read")
			}
		})
	}
}

// loggedIn returns a conn to a fake server (which echoes every packet) after its PRELOGIN
// exchange and LOGIN7.
func loggedIn(t *testing.T, pki *testPKI, client msdsn.Encryption, server prelogin.Encryption) *conn {
	t.Helper()
	srv := newFakeServer(t, pki, server, false)
	t.Cleanup(srv.close)
	c, err := dialTest(t, testSettings(t, pki, client), srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	exchangePrelogin(t, c)
	roundTrip(t, c, tds.TypeLogin7, buildLogin7(testLogin7{user: "sa"}))
	return c
}
