package mssqlbridge

import (
	"bytes"
	"net"
	"testing"
)

// TestAppendSecret: when the buffer must grow, the array it leaves behind is cleared, so no
// copy of a LOGIN7 secret is left for the garbage collector.
func TestAppendSecret(t *testing.T) {
	dst := make([]byte, 0, 4)
	dst = appendSecret(dst, []byte("pw"))
	old := dst[:cap(dst)]
	dst = appendSecret(dst, []byte("secret"))
	if string(dst) != "pwsecret" {
		t.Fatalf("got %q", dst)
	}
	if !bytes.Equal(old, make([]byte, len(old))) {
		t.Fatalf("the old array still holds %q", old)
	}
}

// TestCloseClearsLogin: Close clears a LOGIN7 message that login-only mode was still
// collecting.
func TestCloseClearsLogin(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := newConn(t.Context(), a, testSettings(t, newTestPKI(t), 0), "localhost")
	c.login = appendSecret(nil, []byte("password bytes"))
	held := c.login[:cap(c.login)]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.login != nil || !bytes.Equal(held, make([]byte, len(held))) {
		t.Fatalf("after Close: login %q, its array %q", c.login, held)
	}
}
