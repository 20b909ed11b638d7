package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// faultRow is one row of the fault table: a cell's scenario, or one step of it, run through
// database/sql. It is what -json writes per row; durations are nanoseconds (fields ending in _ns).
type faultRow struct {
	Scenario   string          `json:"scenario"` // "1", "2", ...
	Name       string          `json:"name"`
	Step       string          `json:"step,omitempty"` // mid-result scenarios: "that query" or "next query"
	Encryption string          `json:"encryption"`     // TLS or plaintext
	Transport  string          `json:"transport"`      // native or bridged
	Bound      time.Duration   `json:"bound_ns"`       // the context deadline of each call
	Returned   time.Duration   `json:"returned_in_ns"` // the longest call (the wait limit if one is blocked)
	Times      []time.Duration `json:"times_ns"`       // every call
	Blocked    bool            `json:"still_blocked"`  // a call had not returned at the wait limit
	Queries    int             `json:"queries"`        // calls that returned or were given up on
	Errors     int             `json:"errors"`         // calls that returned an error
	Error      string          `json:"error,omitempty"`

	errs []error // every call's error, nil for a success (tests look at them)
}

// firstLine returns the first line of err's message, at most 200 characters.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}

// callResult is one timed call: how long it took, its error, and whether it was given up on
// (then d is the wait limit and err an *errBlocked).
type callResult struct {
	d       time.Duration
	err     error
	blocked bool
}

// add records one call.
func (r *faultRow) add(c callResult) {
	r.Queries++
	r.Times = append(r.Times, c.d)
	r.errs = append(r.errs, c.err)
	r.Returned = max(r.Returned, c.d)
	if c.blocked {
		// The application has seen nothing yet: no error to count.
		r.Blocked = true
		return
	}
	if err := c.err; err != nil {
		r.Errors++
		if r.Error == "" {
			r.Error = firstLine(err)
		}
	}
}

// errBlocked stands for the error of a call given up on.
type errBlocked struct{ after time.Duration }

func (e *errBlocked) Error() string { return fmt.Sprintf("still blocked after %v", e.after) }

// pendingCall is a call given up on: done closes when it returns (once the server is closed),
// and db is closed after that.
type pendingCall struct {
	done <-chan struct{}
	db   *sql.DB
	what string
}

// cellRun is one cell's run: its rows, and the calls given up on.
type cellRun struct {
	c       faultCell
	dsn     string
	repeat  int
	rows    []*faultRow
	pending []pendingCall
}

// limit is how long a call of the cell is waited for before it counts as still blocked.
func (r *cellRun) limit() time.Duration {
	if r.c.sc.kind == kindConnect {
		return r.c.sc.bound + faultBlockedSlack
	}
	return r.c.sc.bound + faultDrain + faultBlockedSlack
}

// newRow starts a row of the cell.
func (r *cellRun) newRow(step string) *faultRow {
	row := &faultRow{Scenario: r.c.sc.id, Name: r.c.sc.name, Step: step, Encryption: encName(r.c.encrypt),
		Transport: r.c.transport, Bound: r.c.sc.bound}
	r.rows = append(r.rows, row)
	return row
}

// call runs f(ctx) with a context of the scenario's bound, in a goroutine, and waits for it at
// most r.limit(). A call given up on returns blocked and an *errBlocked; db is then left open
// (in r.pending) until the call returns.
func (r *cellRun) call(ctx context.Context, db *sql.DB, what string, f func(context.Context) error) callResult {
	done := make(chan struct{})
	var err error
	start := time.Now()
	var d time.Duration
	go func() {
		defer close(done)
		cctx, cancel := context.WithTimeout(ctx, r.c.sc.bound)
		defer cancel()
		err = f(cctx)
		d = time.Since(start)
	}()
	t := time.NewTimer(r.limit())
	defer t.Stop()
	select {
	case <-done:
		return callResult{d: d, err: err}
	case <-t.C:
		r.pending = append(r.pending, pendingCall{done: done, db: db, what: r.c.key() + " " + what})
		return callResult{d: r.limit(), err: &errBlocked{after: r.limit()}, blocked: true}
	}
}

// open opens a *sql.DB of the cell's transport with the default pool.
func (r *cellRun) open() (*sql.DB, error) {
	db, err := sql.Open(driverName(r.c.transport), r.dsn)
	if err != nil {
		return nil, fmt.Errorf("bench: faults %s: %w", r.c.key(), err)
	}
	return db, nil
}

// run runs the cell's scenario. An error is a setup failure (the DSN does not open); what the
// scenario's calls return is in the rows.
func (r *cellRun) run(ctx context.Context) error {
	switch r.c.sc.kind {
	case kindConnect:
		return r.runOnce(ctx, "", func(ctx context.Context, db *sql.DB) error { return db.PingContext(ctx) })
	case kindStallQuery:
		return r.runOnce(ctx, "", func(ctx context.Context, db *sql.DB) error { return queryAll(ctx, db, "SELECT 1", -1) })
	case kindIdle:
		return r.runIdle(ctx)
	case kindMidResult:
		return r.runMidResult(ctx)
	case kindEarlyError:
		return r.runEarlyError(ctx)
	}
	return fmt.Errorf("bench: faults %s: unknown kind %d", r.c.key(), r.c.sc.kind)
}

// runOnce runs one call f on a new *sql.DB.
func (r *cellRun) runOnce(ctx context.Context, step string, f func(context.Context, *sql.DB) error) error {
	db, err := r.open()
	if err != nil {
		return err
	}
	row := r.newRow(step)
	c := r.call(ctx, db, "call", func(ctx context.Context) error { return f(ctx, db) })
	row.add(c)
	if !c.blocked {
		_ = db.Close()
	}
	return nil
}

// runIdle runs the idle scenario r.repeat times, each on a new *sql.DB: SELECT 1, after which
// the server drops that connection; faultIdle of idling; SELECT 1 again, the counted query, on
// the dead pooled connection. A failure of the first query counts as the repeat's error.
func (r *cellRun) runIdle(ctx context.Context) error {
	row := r.newRow("")
	for i := 0; i < r.repeat && ctx.Err() == nil; i++ {
		db, err := r.open()
		if err != nil {
			return err
		}
		c := r.call(ctx, db, "first query", func(ctx context.Context) error { return selectOne(ctx, db) })
		if c.err != nil {
			c.err = fmt.Errorf("first query: %w", c.err)
			row.add(c)
			if c.blocked {
				return nil
			}
			_ = db.Close()
			continue
		}
		select {
		case <-time.After(faultIdle):
		case <-ctx.Done():
		}
		c = r.call(ctx, db, "query after the idle", func(ctx context.Context) error { return selectOne(ctx, db) })
		row.add(c)
		if c.blocked {
			return nil
		}
		_ = db.Close()
	}
	return nil
}

// runEarlyError runs the early-error scenario r.repeat times, each on a sql.Conn of a new
// *sql.DB: a query the server answers with an error that go-mssqldb returns while it still
// reads the rest of the response, then SELECT 1, the counted query. The first query's error is
// expected and not counted; a failure to get the sql.Conn counts as the repeat's error.
func (r *cellRun) runEarlyError(ctx context.Context) error {
	row := r.newRow("")
	for i := 0; i < r.repeat && ctx.Err() == nil; i++ {
		db, err := r.open()
		if err != nil {
			return err
		}
		c := r.call(ctx, db, "query after the early error", func(ctx context.Context) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				return fmt.Errorf("sql.Conn: %w", err)
			}
			defer conn.Close()
			if rows, err := conn.QueryContext(ctx, "SELECT 2"); err == nil {
				_ = rows.Close()
				return errors.New("bench: the early-error query succeeded")
			}
			var v int
			return conn.QueryRowContext(ctx, "SELECT 1").Scan(&v)
		})
		row.add(c)
		if c.blocked {
			return nil
		}
		_ = db.Close()
	}
	return nil
}

// runMidResult runs the 1 MiB query the server cuts, then the same query again on the same
// *sql.DB: a row each.
func (r *cellRun) runMidResult(ctx context.Context) error {
	db, err := r.open()
	if err != nil {
		return err
	}
	q, want := valueQuery(valueVarbinary, 1<<20)
	for _, step := range []string{"that query", "next query"} {
		row := r.newRow(step)
		c := r.call(ctx, db, step, func(ctx context.Context) error { return queryAll(ctx, db, q, want) })
		row.add(c)
		if c.blocked {
			return nil
		}
	}
	_ = db.Close()
	return nil
}

// selectOne runs SELECT 1, reads its answer to the end and checks it. Not QueryRow: its Scan
// closes the rows after the first row, and go-mssqldb's Rows.Close (mssql.go) cancels the
// response reader first, which sends an ATTENTION if the reader has not yet taken the final
// DONE; the connection is then not idle but waiting for the server's acknowledgement, and a
// server that drops it fails that query instead of the next one.
func selectOne(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT 1")
	if err != nil {
		return err
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return err
		}
		got = append(got, n)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(got) != 1 || got[0] != 1 {
		return fmt.Errorf("bench: SELECT 1 returned %v", got)
	}
	return rows.Close()
}

// queryAll runs q and reads every row's single value; with want >= 0 the query must return
// one row whose value has want bytes.
func queryAll(ctx context.Context, db *sql.DB, q string, want int) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var v sql.RawBytes
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if want >= 0 && len(v) != want {
			return fmt.Errorf("bench: a value of %d bytes, want %d", len(v), want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if want >= 0 && n != 1 {
		return fmt.Errorf("bench: %d rows, want 1", n)
	}
	return rows.Close()
}

// runFaultCells runs every cell at once (each against the DSN dsn gives for it, repeat times
// where the scenario repeats) and returns the rows in cell order and the calls given up on. The
// caller closes the servers, then waits for those calls (waitPending).
func runFaultCells(ctx context.Context, cells []faultCell, dsn func(faultCell) (string, error), repeat int) ([]*faultRow, []pendingCall, error) {
	runs := make([]*cellRun, len(cells))
	errs := make([]error, len(cells))
	var wg sync.WaitGroup
	for i, c := range cells {
		d, err := dsn(c)
		if err != nil {
			return nil, nil, err
		}
		runs[i] = &cellRun{c: c, dsn: d, repeat: repeat}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runs[i].run(ctx)
		}()
	}
	wg.Wait()
	var rows []*faultRow
	var pending []pendingCall
	var first error
	for i, r := range runs {
		rows = append(rows, r.rows...)
		pending = append(pending, r.pending...)
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
	}
	return rows, pending, first
}

// waitPending waits up to limit in all for the calls given up on (their servers closed), closes
// their databases, and returns the ones still running.
func waitPending(pending []pendingCall, limit time.Duration) []string {
	deadline := time.After(limit)
	expired := false
	var still []string
	for _, p := range pending {
		if !expired {
			select {
			case <-p.done:
			case <-deadline:
				expired = true
			}
		}
		select {
		case <-p.done:
			_ = p.db.Close()
		default:
			still = append(still, p.what)
		}
	}
	return still
}
