package integration

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"
)

// A server the suites run against may lack something SQL Server 2022 has (Babelfish for
// PostgreSQL has neither TDS 8.0 nor WAITFOR). The suites find out by trying it, through neither
// the bridge nor go-mssqldb's own TLS where they can, and skip the cases that need it, by name,
// with what the server answered. Only an answer that shows the server lacks the feature skips;
// anything else fails the case.

// requireTDS8 skips the calling test when tg's server does not speak TDS 8.0 (encrypt=strict),
// and fails it when the server cannot be reached (see lacksTDS8).
func requireTDS8(t *testing.T, tg target) {
	t.Helper()
	why, err := lacksTDS8(ctxFor(t, 15*time.Second), tg.base)
	if err != nil {
		t.Fatalf("%s: %v", tg.name, err)
	}
	if why != "" {
		t.Skipf("missing: %s does not speak TDS 8.0 (encrypt=strict): %s", tg.name, why)
	}
}

// lacksTDS8 connects to the server of dsn over TCP and starts TLS at once, with ALPN tds/8.0, as
// a strict client does. It returns why the server lacks TDS 8.0 when the handshake fails, "" when
// it succeeds, and an error when no TCP connection can be made.
func lacksTDS8(ctx context.Context, dsn string) (why string, err error) {
	cfg, err := msdsn.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse the DSN: %w", err)
	}
	port := cfg.Port
	if port == 0 {
		port = 1433
	}
	addr := net.JoinHostPort(cfg.Host, strconv.FormatUint(port, 10))
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("TCP connect for the TDS 8.0 probe: %w", err)
	}
	defer raw.Close()
	conn := tls.Client(raw, &tls.Config{
		InsecureSkipVerify: true, // the probe asks only whether TLS comes first; the cases verify
		NextProtos:         []string{"tds/8.0"},
		ServerName:         cfg.Host,
	})
	if err := conn.HandshakeContext(ctx); err != nil {
		return "a TLS handshake at connect, with ALPN tds/8.0, failed: " + err.Error(), nil
	}
	return "", nil
}

// waitforProbe is the statement requireWaitfor runs: a wait short enough not to matter.
const waitforProbe = "WAITFOR DELAY '00:00:00.010'"

// requireWaitfor skips the calling test when tg's server refuses WAITFOR DELAY, which the
// cancellation cases use to keep a query running (see lacksStatement).
func requireWaitfor(t *testing.T, tg target, db *sql.DB) {
	t.Helper()
	why, err := lacksStatement(ctxFor(t, 30*time.Second), db, waitforProbe)
	if err != nil {
		t.Fatalf("%s: %v", tg.name, err)
	}
	if why != "" {
		t.Skipf("missing: %s refuses WAITFOR DELAY, which keeps a query running to cancel it: %s", tg.name, why)
	}
}

// lacksStatement runs stmt on db. It returns the server's refusal when the error is one the
// server sent (a go-mssqldb Error, with the server's number and message), "" when stmt ran, and
// any other error as it is.
func lacksStatement(ctx context.Context, db *sql.DB, stmt string) (why string, err error) {
	_, err = db.ExecContext(ctx, stmt)
	var serverErr mssql.Error
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &serverErr):
		return fmt.Sprintf("server error %d: %s", serverErr.Number, serverErr.Message), nil
	default:
		return "", fmt.Errorf("%s: %w", stmt, err)
	}
}
