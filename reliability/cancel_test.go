package reliability

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// cancelled reports whether err is what a query whose context ended may return: the context's
// error, go-mssqldb's report of the cancellation, or a dial that the context's deadline cut
// short ("i/o timeout": net.Dialer maps a context deadline to a timeout, and go-mssqldb keeps
// only the text of a dial error).
func cancelled(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isTimeout(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "context deadline exceeded") || strings.Contains(msg, "context canceled") ||
		strings.Contains(msg, "unable to open tcp connection") && strings.Contains(msg, "i/o timeout")
}

// TestCancelStorm cancels queries at random points (go-mssqldb sends an ATTENTION from another
// goroutine while its Read is blocked, then drains the response) on every load target, and
// checks that a query either fails because of its context or returns exactly the right value,
// and that the pool stays healthy: after the storm every connection answers correctly.
func TestCancelStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	if raceEnabled {
		// go-mssqldb v1.11.2's Conn.Close puts its read buffer back in a sync.Pool before it
		// closes the transport, while the connection's response reader may still be using it;
		// a storm of cancelled connections hands that buffer to a new connection, and the race
		// detector reports go-mssqldb's reader against the new connection's Read. Nothing here
		// can order the driver's own goroutines, so the storm runs without -race: in `make test`'s
		// second pass, without the detector, and in `make soak`.
		t.Skip("skipped under -race (go-mssqldb v1.11.2 reuses a closed connection's read buffer, see comment); " +
			"make test runs it again without -race")
	}
	t.Parallel()
	const workers, rounds = 4, 25
	const window = 20_000 // µs: the range of the queries' timeouts
	for _, lt := range loadTargets {
		t.Run(lt.name, func(t *testing.T) {
			t.Parallel()
			cfg := lt.cfg
			cfg.Logf = func(string, ...any) {}
			s := startTDS(t, cfg)
			db := openBridged(t, s.DSN(append(lt.params, "certificate="+s.CAFile())...))
			db.SetMaxOpenConns(workers)
			db.SetMaxIdleConns(workers)
			var (
				wg                sync.WaitGroup
				mu                sync.Mutex
				completed, killed int
			)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 42))
					for range rounds {
						q := newQuery(rng, randomSize(rng, 1<<20))
						// The connection first (without a short deadline), so that the
						// cancellation lands in the query.
						conn, err := db.Conn(context.Background())
						if err != nil {
							t.Errorf("connect: %v", err)
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(window))*time.Microsecond)
						_, err = q.run(ctx, conn)
						_ = conn.Close()
						cancel()
						mu.Lock()
						switch {
						case err == nil:
							completed++
						case cancelled(err):
							killed++
						default:
							t.Errorf("query %.50s...: %v", q.text, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			t.Logf("%d queries completed with the right value, %d cancelled", completed, killed)
			// Every pooled connection must still work.
			rng := rand.New(rand.NewPCG(7, 7))
			for i := range 2 * workers {
				ctx, cancel := context.WithTimeout(context.Background(), hangBound)
				conn, err := db.Conn(ctx)
				if err == nil {
					_, err = newQuery(rng, 100_000).run(ctx, conn)
					_ = conn.Close()
				}
				cancel()
				if err != nil {
					t.Errorf("query %d after the storm: %v", i, err)
				}
			}
		})
	}
}

// TestLoadWithFaults runs queries while the server breaks connections (closes, resets) when a
// query arrives or in the middle of its result: every query either fails with an error or
// returns exactly the right value, never wrong data, and nothing hangs. (Stalls are covered by
// the fault matrices; here they would only make the test slow.)
func TestLoadWithFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	t.Parallel()
	const workers, rounds = 4, 20
	for _, lt := range loadTargets {
		t.Run(lt.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Uint64
			cfg := lt.cfg
			cfg.Logf = func(string, ...any) {}
			cfg.Faults.Hook = func(_ int, phase tdstest.Phase) tdstest.Action {
				if phase != tdstest.PhaseResult && phase != tdstest.PhaseQuery {
					return tdstest.ActionNone
				}
				// A fixed pseudo-random sequence: about one call in eight breaks.
				switch x := n.Add(1) * 0x9E3779B97F4A7C15 >> 58; {
				case x < 5:
					return tdstest.ActionClose
				case x < 8:
					return tdstest.ActionReset
				}
				return tdstest.ActionNone
			}
			s := startTDS(t, cfg)
			db := openBridged(t, s.DSN(append(lt.params, "certificate="+s.CAFile())...))
			var (
				wg         sync.WaitGroup
				mu         sync.Mutex
				good, fail int
			)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 9))
					for range rounds {
						q := newQuery(rng, randomSize(rng, 256<<10))
						err := within(t, "query", func() error {
							ctx, cancel := context.WithTimeout(context.Background(), hangBound)
							defer cancel()
							conn, err := db.Conn(ctx)
							if err != nil {
								return err
							}
							defer conn.Close()
							_, err = q.run(ctx, conn)
							return err
						})
						mu.Lock()
						if err == nil {
							good++
						} else {
							fail++
							if errors.Is(err, errValueCheck) {
								t.Errorf("wrong data: %v", err)
							}
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			t.Logf("%d queries right, %d failed with an error (%d fault-hook calls at query and result)", good, fail, n.Load())
			if good == 0 {
				t.Error("no query succeeded: the fault rate is too high to test anything")
			}
		})
	}
}
