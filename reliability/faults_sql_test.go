package reliability

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/mssqlbridge"
	"github.com/tdsbridge/tdsbridge/tds"
	"github.com/tdsbridge/tdsbridge/tdstest"
)

// bigQuery asks tdstest for a 2 MB varbinary(max) value: a result of many packets, so that a
// fault at PhaseResult lands in the middle of it.
const bigQuery = "SELECT CAST(REPLICATE(CAST('0123456789abcdef' AS varchar(max)), 131072) AS varbinary(max))"

// TestFaultMatrixSQL runs the server-side faults of tdstest against the bridged go-mssqldb
// connector through database/sql: every fault must end the call with a clear error (wrapped
// sentinels reachable with errors.Is, a message that says where it happened), within a bound
// that tells an error from a hang, and leave no goroutine behind (TestMain's goleak).
//
// Every case runs in each encryption mode (tdstest.Modes): none, login-only, full and strict
// (handshake faults do not apply to none).
//
// Each case gets its own server and a dedicated *sql.Conn, so that database/sql's retry of
// driver.ErrBadConn on a fresh connection cannot hide the fault.
func TestFaultMatrixSQL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults tdstest.Faults
		params []string      // DSN parameters besides encrypt and certificate
		query  string        // "" = connect only
		ctxTO  time.Duration // context timeout of the call (0: hangBound)
		is     []error
		msgs   []string
		check  func(t *testing.T, err error)
		only   string // run in this mode only ("": every mode)
	}{
		{
			name:   "close-before-prelogin-reply",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionClose},
			is:     []error{io.EOF},
			msgs:   []string{"PRELOGIN: read PRELOGIN reply: server closed the connection"},
		},
		{
			name:   "reset-before-prelogin-reply",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionReset},
			is:     []error{syscall.ECONNRESET},
			msgs:   []string{"PRELOGIN: read PRELOGIN reply", "connection reset by peer"},
		},
		{
			// tdstest closes before reading the client's ClientHello: if it has arrived,
			// the kernel answers the close with a reset instead of an end of stream.
			name:   "close-mid-handshake",
			faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionClose},
			msgs:   []string{"TLS handshake", "bridge: handshake: read PRELOGIN reply"},
			check:  wantPeerGone,
		},
		{
			name:   "close-at-login",
			faults: tdstest.Faults{At: tdstest.PhaseLogin, Action: tdstest.ActionClose},
			is:     []error{io.EOF},
			msgs:   []string{"EOF"},
		},
		{
			name:   "close-after-login",
			faults: tdstest.Faults{At: tdstest.PhaseQuery, Action: tdstest.ActionClose},
			query:  "SELECT 1",
			is:     []error{io.EOF},
			msgs:   []string{"EOF"},
		},
		{
			name:   "close-mid-result",
			faults: tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionClose},
			query:  bigQuery,
			// go-mssqldb flattens this one with %v: only the message is left to check.
			msgs: []string{"Reading PLP type failed", "EOF"},
		},
		{
			name:   "wrong-type-prelogin-reply",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionWrongType},
			is:     []error{mssqlbridge.ErrMalformedReply, tds.ErrUnexpectedType},
			msgs:   []string{"SQLBatch"},
		},
		{
			name:   "short-length-prelogin-reply",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionBadLength},
			is:     []error{mssqlbridge.ErrMalformedReply, tds.ErrShortLength},
		},
		{
			name:   "wrong-type-handshake",
			faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionWrongType},
			is:     []error{tds.ErrUnexpectedType},
			msgs:   []string{"TLS handshake", "bridge: handshake: read PRELOGIN reply", "SQLBatch"},
		},
		{
			name:   "short-length-handshake",
			faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionBadLength},
			is:     []error{tds.ErrShortLength},
			msgs:   []string{"TLS handshake", "bridge: handshake: read PRELOGIN reply"},
		},
		{
			// After the handshake the bad packets travel inside TLS: the driver's own
			// reader must refuse them; the transport must deliver them intact and not hang.
			name:   "wrong-type-login-response",
			faults: tdstest.Faults{At: tdstest.PhaseLogin, Action: tdstest.ActionWrongType},
			msgs:   []string{"unexpected packet type in reply: got 1, expected 4"},
		},
		{
			name:   "short-length-login-response",
			faults: tdstest.Faults{At: tdstest.PhaseLogin, Action: tdstest.ActionBadLength},
			msgs:   []string{"shorter than header size"},
		},
		{
			name:   "wrong-type-mid-result",
			faults: tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionWrongType},
			query:  bigQuery,
			// go-mssqldb does not check the type of a message's later packets: it reads on
			// and meets the end of the stream.
			msgs: []string{"EOF"},
		},
		{
			name:   "short-length-mid-result",
			faults: tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionBadLength},
			query:  bigQuery,
			msgs:   []string{"shorter than header size"},
		},
		{
			name:   "stall-prelogin-dial-timeout",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionStall},
			params: []string{"dial timeout=1"},
			check:  wantTimeout,
		},
		{
			name:   "stall-prelogin-context",
			faults: tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionStall},
			ctxTO:  500 * time.Millisecond,
			check:  wantTimeout,
		},
		{
			name:   "stall-handshake-context",
			faults: tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionStall},
			ctxTO:  500 * time.Millisecond,
			check:  wantTimeout,
		},
		{
			name:   "stall-login-context",
			faults: tdstest.Faults{At: tdstest.PhaseLogin, Action: tdstest.ActionStall},
			ctxTO:  500 * time.Millisecond,
			check:  wantTimeout,
		},
		{
			name:   "stall-query-connection-timeout",
			faults: tdstest.Faults{At: tdstest.PhaseQuery, Action: tdstest.ActionStall},
			params: []string{"connection timeout=1"},
			query:  "SELECT 1",
			check:  wantTimeout,
		},
		{
			name:   "stall-query-context",
			faults: tdstest.Faults{At: tdstest.PhaseQuery, Action: tdstest.ActionStall},
			query:  "SELECT 1",
			ctxTO:  500 * time.Millisecond,
			check:  wantTimeout,
			// go-mssqldb then waits for the server's cancellation confirmation, which a
			// stalled server never sends, up to 10 s (its cancelDrainTimeout) unless a
			// connection timeout ends the drain's reads first: one mode only, and a
			// connection timeout to keep the test short.
			params: []string{"connection timeout=2"},
			only:   "full",
		},
		{
			name:   "stall-mid-result-context",
			faults: tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionStall},
			query:  bigQuery,
			ctxTO:  500 * time.Millisecond,
			check:  wantTimeout,
			// go-mssqldb then waits for the server's cancellation confirmation, which a
			// stalled server never sends, up to 10 s (its cancelDrainTimeout) unless a
			// connection timeout ends the drain's reads first: one mode only, and a
			// connection timeout to keep the test short.
			params: []string{"connection timeout=2"},
			only:   "full",
		},
		{
			name:   "stall-mid-result-connection-timeout",
			faults: tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionStall},
			params: []string{"connection timeout=1"},
			query:  bigQuery,
			check:  wantTimeout,
		},
	}
	for _, tt := range tests {
		for _, m := range tdstest.Modes() {
			t.Run(tt.name+"/"+m.Name, func(t *testing.T) {
				t.Parallel()
				if tt.only != "" && m.Name != tt.only {
					t.Skipf("runs in %s mode only", tt.only)
				}
				if m.Name == "none" && tt.faults.At == tdstest.PhaseHandshake {
					t.Skip("no handshake without encryption")
				}
				cfg := m.Config
				cfg.Faults = tt.faults
				s := startTDS(t, cfg)
				params := append([]string{"encrypt=" + m.Encrypt, "certificate=" + s.CAFile()}, tt.params...)
				db := openBridged(t, s.DSN(params...))
				to := tt.ctxTO
				if to == 0 {
					to = hangBound
				}
				err := within(t, tt.name, func() error {
					ctx, cancel := context.WithTimeout(context.Background(), to)
					defer cancel()
					return connectAndQuery(ctx, db, tt.query)
				})
				t.Logf("error: %v", err)
				is, msgs := tt.is, tt.msgs
				if m.Name == "strict" && tt.faults.At == tdstest.PhaseHandshake && tt.ctxTO == 0 {
					// In strict mode tdstest has no packet to mutate before its first TLS
					// write: every handshake fault closes the connection instead.
					is, msgs = nil, []string{"mssqlbridge: connect 127.0.0.1:", "TLS handshake: "}
				}
				checkErr(t, err, is, msgs...)
				if tt.check != nil {
					tt.check(t, err)
				}
				_ = db.Close()
			})
		}
	}
}

// connectAndQuery takes a dedicated connection from db and, if query is not empty, runs it and
// reads every row.
func connectAndQuery(ctx context.Context, db *sql.DB, query string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if query == "" {
		return conn.PingContext(ctx)
	}
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// wantPeerGone checks that err says the server went away: an end of stream where a message
// was due, or a reset.
func wantPeerGone(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error %q (%T) is neither an unexpected end of stream nor a reset", err, err)
	}
}

// wantTimeout checks that err says the wait ended by a timeout or a cancelled context.
func wantTimeout(t *testing.T, err error) {
	t.Helper()
	if isTimeout(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		strings.Contains(err.Error(), "timeout") || strings.Contains(err.Error(), "deadline") {
		return
	}
	t.Errorf("error %q (%T) is not a timeout", err, err)
}
