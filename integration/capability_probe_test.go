package integration

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// TestProbes checks the capability probes on both answers: tdstest speaks TDS 8.0 and runs
// WAITFOR DELAY; a server that closes the connection on a ClientHello (as Babelfish does, which
// reads it as a PRELOGIN it cannot parse) lacks TDS 8.0; a statement the server refuses is a
// refusal; an address where nothing listens is an error, not a lack.
func TestProbes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := tdstest.NewServer(tdstest.Config{Encryption: tdstest.EncryptOff})
	require.NoError(t, err)
	defer srv.Close()

	why, err := lacksTDS8(ctx, srv.DSN())
	require.NoError(t, err)
	require.Empty(t, why, "tdstest speaks TDS 8.0")

	closer, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := closer.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 512))
			_ = c.Close()
		}
	}()
	why, err = lacksTDS8(ctx, "sqlserver://sa:x@"+closer.Addr().String())
	require.NoError(t, err)
	require.Contains(t, why, "TLS handshake at connect")
	addr := closer.Addr().String()
	require.NoError(t, closer.Close())
	<-done
	_, err = lacksTDS8(ctx, "sqlserver://sa:x@"+addr)
	require.Error(t, err, "nothing listens: an error, not a lack")

	db := openBridged(t, srv.DSN("encrypt=disable"))
	why, err = lacksStatement(ctx, db, waitforProbe)
	require.NoError(t, err)
	require.Empty(t, why, "tdstest runs "+waitforProbe)
	why, err = lacksStatement(ctx, db, "WAITFOR TIME '23:00'")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(why, "server error "), "a refusal by the server: %q", why)
}
