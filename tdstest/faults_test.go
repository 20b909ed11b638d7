package tdstest

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsbridge/tdsbridge/prelogin"
	"github.com/tdsbridge/tdsbridge/tds"
)

// queryWithDeadline runs SELECT 1 and the big query on a fresh connection and returns the first
// error. The deadline only guards against a hang (a failure), it is not a timing assertion.
func queryWithDeadline(t *testing.T, dsn string) error {
	t.Helper()
	db := openMSSQL(t, dsn)
	db.SetMaxIdleConns(0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var s string
	err := db.QueryRowContext(ctx, queryBig).Scan(&s)
	if ctx.Err() != nil {
		t.Fatalf("client hung until the deadline: %v", err)
	}
	return err
}

// TestFaultsFailClient: every phase with every connection-ending action makes go-mssqldb fail
// cleanly, and the server logs the fault.
func TestFaultsFailClient(t *testing.T) {
	phases := []Phase{PhasePrelogin, PhaseHandshake, PhaseLogin, PhaseQuery, PhaseResult}
	actions := []Action{ActionClose, ActionReset, ActionWrongType, ActionBadLength}
	for _, p := range phases {
		for _, a := range actions {
			t.Run(p.String()+"/"+a.String(), func(t *testing.T) {
				s, log := startServer(t, Config{Faults: Faults{At: p, Action: a}})
				err := queryWithDeadline(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
				if err == nil {
					t.Fatal("query succeeded despite the fault")
				}
				t.Logf("client error: %v", err)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(log.String(), "fault injected at "+p.String()+": "+a.String()) {
					t.Error("fault not logged")
				}
			})
		}
	}
}

func TestFaultStall(t *testing.T) {
	for _, p := range []Phase{PhasePrelogin, PhaseHandshake, PhaseLogin, PhaseQuery, PhaseResult} {
		t.Run(p.String(), func(t *testing.T) {
			s, err := NewServer(Config{Faults: Faults{At: p, Action: ActionStall}})
			if err != nil {
				t.Fatal(err)
			}
			db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
			done := make(chan error, 1)
			go func() {
				var v string
				done <- db.QueryRowContext(context.Background(), queryBig).Scan(&v)
			}()
			var qerr error
			select {
			case qerr = <-done:
				t.Fatalf("query returned against a stalled server: %v", qerr)
			case <-time.After(300 * time.Millisecond):
			}
			// Close must end the stalled connection (goleak checks no goroutine is left), and
			// the client then sees the connection end.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if qerr = <-done; qerr == nil {
				t.Fatal("query succeeded against a stalled server")
			}
		})
	}
}

func TestFaultReplyNotSup(t *testing.T) {
	s, _ := startServer(t, Config{Faults: Faults{ReplyNotSup: true}})
	err := queryWithDeadline(t, s.DSN("encrypt=true", "certificate="+s.CAFile()))
	if err == nil || !strings.Contains(err.Error(), "encryption") {
		t.Fatalf("encrypt=true client accepted a stripped connection: %v", err)
	}
	// A raw client sees NOT_SUP in reply to ON.
	c := dialRaw(t, s)
	reply, err := c.prelogin(prelogin.EncryptOn)
	if reply != prelogin.EncryptNotSup || !errors.Is(err, prelogin.ErrServerNoEncryption) {
		t.Fatalf("reply %v, err %v", reply, err)
	}
}

func TestFaultErrorTokens(t *testing.T) {
	t.Run("login", func(t *testing.T) {
		s, _ := startServer(t, Config{Faults: Faults{At: PhaseLogin, Action: ActionError}})
		err := queryWithDeadline(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 18456 {
			t.Fatalf("err = %v, want login failed 18456", err)
		}
	})
	t.Run("query once", func(t *testing.T) {
		s, _ := startServer(t, Config{Faults: Faults{At: PhaseQuery, Action: ActionError, Times: 1}})
		db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var one int
		err = conn.QueryRowContext(ctx, "SELECT 1").Scan(&one)
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 50000 {
			t.Fatalf("err = %v, want ERROR 50000", err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("second query on the same connection: %d, %v", one, err)
		}
	})
}

func TestFaultConnSelectionAndHook(t *testing.T) {
	s, _ := startServer(t, Config{Faults: Faults{At: PhaseLogin, Action: ActionClose, Conn: 2}})
	dsn := s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost")
	if err := queryWithDeadline(t, dsn); err != nil {
		t.Fatalf("connection 1: %v", err)
	}
	if err := queryWithDeadline(t, dsn); err == nil {
		t.Fatal("connection 2 succeeded despite the fault")
	}
	if err := queryWithDeadline(t, dsn); err != nil {
		t.Fatalf("connection 3: %v", err)
	}

	var mu sync.Mutex
	var seen []string
	hook := func(conn int, p Phase) Action {
		mu.Lock()
		seen = append(seen, p.String())
		mu.Unlock()
		return ActionNone
	}
	s2, _ := startServer(t, Config{Faults: Faults{Hook: hook}})
	if err := queryWithDeadline(t, s2.DSN("encrypt=true", "certificate="+s2.CAFile(), "hostnameincertificate=localhost")); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// go-mssqldb may cancel the query after its row (Rows.Close before the final DONE): the
	// ATTENTION is one more request, after which the server is idle once more.
	got := strings.Join(seen, ",")
	if rest, ok := strings.CutPrefix(got, "prelogin,handshake,login,idle,query,result,idle"); !ok || strings.Trim(strings.ReplaceAll(rest, ",idle", ""), ",") != "" {
		t.Fatalf("hook saw %s", got)
	}
}

// TestFaultWrongTypeRaw checks the mutated packet itself.
func TestFaultWrongTypeRaw(t *testing.T) {
	for _, a := range []Action{ActionWrongType, ActionBadLength} {
		s, _ := startServer(t, Config{Faults: Faults{At: PhaseQuery, Action: a}})
		c := dialRaw(t, s)
		c.connect(s, 4096)
		if err := c.w.WriteMessage(tds.TypeSQLBatch, batchMessage("SELECT 1")); err != nil {
			t.Fatal(err)
		}
		typ, _, err := c.r.ReadMessage()
		switch a {
		case ActionWrongType:
			if err != nil || typ != tds.TypeSQLBatch {
				t.Fatalf("%v: got a %v message, err %v; want a SQLBatch packet", a, typ, err)
			}
		case ActionBadLength:
			if !errors.Is(err, tds.ErrShortLength) {
				t.Fatalf("%v: err %v, want ErrShortLength", a, err)
			}
		}
	}
}

func TestFaultsValidate(t *testing.T) {
	for name, f := range map[string]Faults{
		"phase":  {At: Phase(42)},
		"action": {Action: Action(42)},
		"conn":   {Conn: -1},
	} {
		if _, err := NewServer(Config{Faults: f}); err == nil {
			t.Errorf("%s: invalid Faults accepted", name)
		}
	}
	if Phase(42).String() != "Phase(42)" || Action(42).String() != "Action(42)" || PhaseResult.String() != "result" {
		t.Error("String")
	}
	var ne net.Error
	_ = ne
}

// idleOnce returns a Hook that does a at the second PhaseIdle of the first connection: after the
// response to its first request, the login response being the first; it acts 20 ms into the
// idle time, once the client is done with that response.
func idleOnce(a Action) func(int, Phase) Action {
	var mu sync.Mutex
	seen := 0
	return func(conn int, p Phase) Action {
		if conn != 1 || p != PhaseIdle {
			return ActionNone
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == 2 {
			time.Sleep(20 * time.Millisecond)
			return a
		}
		return ActionNone
	}
}

// selectOneToEnd runs SELECT 1 on conn and reads its rows to the end, so that go-mssqldb does
// not cancel it (Rows.Close before the final DONE sends an ATTENTION and waits for the answer):
// the connection is idle once it returns.
func selectOneToEnd(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, "SELECT 1")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// TestFaultIdle: at PhaseIdle the server closes, resets, or sends an unsolicited ERROR 596 on a
// connection that answered its first query and sits idle. go-mssqldb's own transport, on the
// same connection, fails its next query: the fault is what a transport must catch.
func TestFaultIdle(t *testing.T) {
	for _, a := range []Action{ActionClose, ActionReset, ActionError} {
		t.Run(a.String(), func(t *testing.T) {
			s, log := startServer(t, Config{Faults: Faults{Hook: idleOnce(a)}})
			db := openMSSQL(t, s.DSN("encrypt=true", "certificate="+s.CAFile(), "hostnameincertificate=localhost"))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := selectOneToEnd(ctx, conn); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // the fault reaches the client's socket
			err = selectOneToEnd(ctx, conn)
			t.Logf("query after the idle %v: %v", a, err)
			if err == nil {
				t.Fatalf("the query after the idle %v succeeded", a)
			}
			var me mssql.Error
			if a == ActionError && (!errors.As(err, &me) || me.Number != 596) {
				t.Fatalf("got %v, want the unsolicited error 596", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if want := "fault injected at idle: " + a.String(); a != ActionError && !strings.Contains(log.String(), want) {
				t.Errorf("log lacks %q", want)
			}
		})
	}
}

// TestEveryOther: the hook acts at the 1st, 3rd, ... time each connection reaches its phase,
// counting each connection on its own, and never at another phase.
func TestEveryOther(t *testing.T) {
	h := EveryOther(PhaseQuery, ActionEarlyError)
	for _, step := range []struct {
		conn  int
		phase Phase
		want  Action
	}{
		{1, PhaseQuery, ActionEarlyError},
		{1, PhaseIdle, ActionNone},
		{2, PhaseQuery, ActionEarlyError},
		{1, PhaseQuery, ActionNone},
		{1, PhaseQuery, ActionEarlyError},
		{2, PhaseQuery, ActionNone},
		{2, PhaseLogin, ActionNone},
	} {
		if got := h(step.conn, step.phase); got != step.want {
			t.Fatalf("conn %d at %v: %v, want %v", step.conn, step.phase, got, step.want)
		}
	}
}
