package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/tdsbridge/tdsbridge/tdstest"
)

// The fault table (-mode faults): scenarios a user meets when a server, a load balancer or the
// network misbehaves, each run through database/sql with go-mssqldb's own transport (native)
// and with the bridge (the tdsbridge driver), against tdstest servers that misbehave on purpose
// (tdstest/faults.go). Every (scenario, encryption, transport) is a cell with a server of its
// own, so that a fault counted per connection sees only that cell's connections.

// faultKind is what the client does in a scenario.
type faultKind uint8

const (
	// kindConnect: PingContext on a new *sql.DB with the scenario's bound as context deadline.
	kindConnect faultKind = iota + 1
	// kindIdle: per repeat, a new *sql.DB runs SELECT 1 (the server then drops that pooled
	// connection), idles faultIdle, and runs SELECT 1 again: the counted query.
	kindIdle
	// kindMidResult: a 1 MiB query the server cuts halfway, then the same query again on the
	// same *sql.DB.
	kindMidResult
	// kindStallQuery: a SELECT 1 the server never answers, with the bound as context deadline.
	kindStallQuery
	// kindEarlyError: per repeat, on one sql.Conn of a new *sql.DB, a query the server answers
	// with an error followed by many INFO messages (tdstest.ActionEarlyError), then SELECT 1:
	// the counted query, on a healthy connection whose previous response is still being read.
	kindEarlyError
)

// Transports of the fault cells: database/sql driver names.
const (
	transportNative  = "native"  // go-mssqldb's own transport, sql.Open("sqlserver", ...)
	transportBridged = "bridged" // the bridge, sql.Open("tdsbridge", ...)
)

var faultTransports = []string{transportNative, transportBridged}

// driverName returns the database/sql driver name of a transport.
func driverName(transport string) string {
	if transport == transportBridged {
		return "tdsbridge"
	}
	return "sqlserver"
}

// Encryption of the fault cells: go-mssqldb's encrypt values. The servers' setting is OFF, so
// encrypt=true gets full TLS and encrypt=disable none (as the driver child does).
const (
	encTLS   = "true"
	encPlain = "disable"
)

// encName names an encrypt value in the table.
func encName(encrypt string) string {
	if encrypt == encPlain {
		return "plaintext"
	}
	return "TLS"
}

// Timing of the scenarios.
const (
	faultConnectBound = 2 * time.Second  // scenarios 1, 2 and 7: the context deadline
	faultQueryBound   = 10 * time.Second // idle and mid-result queries: a context deadline that only stops a hang
	// faultIdle is how long the client idles before the counted query: longer than the
	// connection timeout of the scenarios that set one (faultTimeout), so that the socket
	// deadline go-mssqldb set before its last Read has passed.
	faultIdle = 1500 * time.Millisecond
	// faultDrain is what go-mssqldb may add to a context's end on a query: it waits
	// cancelDrainTimeout (5 s, its token.go) for the server's cancellation acknowledgement,
	// twice at most.
	faultDrain = 10 * time.Second
	// faultBlockedSlack: a call still running this long after its bound plus faultDrain is
	// reported as still blocked and no longer waited for.
	faultBlockedSlack = 3 * time.Second
)

// faultTimeout is the DSN setting of the scenarios that run with go-mssqldb's connection
// timeout, which makes it set a socket deadline before every Read and Write.
var faultTimeout = []string{"connection timeout=1", "dial timeout=1"}

// faultScenario is one row group of the fault table.
type faultScenario struct {
	id       string // "1", "2", ...
	name     string // what happens, for the table
	kind     faultKind
	bound    time.Duration
	encrypts []string
	faults   func() tdstest.Faults // a new value per server (hooks keep state)
	params   []string              // DSN parameters besides encrypt and certificate
}

// rows is how many rows of the fault table the scenario makes.
func (sc faultScenario) rows() int {
	steps := 1
	if sc.kind == kindMidResult {
		steps = 2 // the cut query, then the next one
	}
	return len(sc.encrypts) * len(faultTransports) * steps
}

// faultScenarios returns the scenarios in table order.
func faultScenarios() []faultScenario {
	both := []string{encTLS, encPlain}
	tls := []string{encTLS}
	scs := []faultScenario{
		{id: "1", name: "server accepts TCP, never answers PRELOGIN", kind: kindConnect, bound: faultConnectBound, encrypts: tls,
			faults: func() tdstest.Faults {
				return tdstest.Faults{At: tdstest.PhasePrelogin, Action: tdstest.ActionStall}
			}},
		{id: "2", name: "server answers PRELOGIN, never the ClientHello", kind: kindConnect, bound: faultConnectBound, encrypts: tls,
			faults: func() tdstest.Faults {
				return tdstest.Faults{At: tdstest.PhaseHandshake, Action: tdstest.ActionStall}
			}},
		{id: "3", name: "server closes (FIN) an idle pooled connection", kind: kindIdle, bound: faultQueryBound, encrypts: both,
			faults: func() tdstest.Faults { return tdstest.Faults{Hook: afterFirstResponse(tdstest.ActionClose)} }},
		{id: "4", name: "server resets (RST) an idle pooled connection", kind: kindIdle, bound: faultQueryBound, encrypts: both,
			faults: func() tdstest.Faults { return tdstest.Faults{Hook: afterFirstResponse(tdstest.ActionReset)} }},
		{id: "5", name: "server closes (FIN) halfway through a 1 MiB result", kind: kindMidResult, bound: faultQueryBound, encrypts: both,
			faults: func() tdstest.Faults {
				return tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionClose, Conn: 1, Times: 1}
			}},
		{id: "6", name: "server resets (RST) halfway through a 1 MiB result", kind: kindMidResult, bound: faultQueryBound, encrypts: both,
			faults: func() tdstest.Faults {
				return tdstest.Faults{At: tdstest.PhaseResult, Action: tdstest.ActionReset, Conn: 1, Times: 1}
			}},
		{id: "7", name: "server never answers a query", kind: kindStallQuery, bound: faultConnectBound, encrypts: tls,
			faults: func() tdstest.Faults {
				return tdstest.Faults{At: tdstest.PhaseQuery, Action: tdstest.ActionStall}
			}},
	}
	idle := []faultScenario{
		{id: "8", name: "server ends TLS (close_notify, then FIN) on an idle pooled connection", kind: kindIdle, bound: faultQueryBound, encrypts: tls,
			faults: func() tdstest.Faults { return tdstest.Faults{Hook: afterFirstResponse(tdstest.ActionCloseNotify)} }},
		{id: "9", name: "server sends an ERROR, then FIN (KILL), on an idle pooled connection", kind: kindIdle, bound: faultQueryBound, encrypts: both,
			faults: func() tdstest.Faults { return tdstest.Faults{Hook: afterFirstResponse(tdstest.ActionError)} }},
	}
	scs = append(scs, idle...)
	// The idle scenarios again, with go-mssqldb's connection timeout in the DSN.
	for _, sc := range scs {
		if sc.kind != kindIdle {
			continue
		}
		sc.id = fmt.Sprintf("%d", len(scs)+1)
		sc.name += ", connection timeout=1"
		sc.params = faultTimeout
		scs = append(scs, sc)
	}
	return append(scs, faultScenario{
		id: fmt.Sprintf("%d", len(scs)+1), name: "query after an early error, response still being read (healthy: never dropped)",
		kind: kindEarlyError, bound: faultQueryBound, encrypts: both,
		faults: func() tdstest.Faults {
			return tdstest.Faults{Hook: tdstest.EveryOther(tdstest.PhaseQuery, tdstest.ActionEarlyError)}
		},
	})
}

// faultIdleDelay is how long the server waits, with a response sent in full, before it drops
// the connection: long enough for the client to have read the response (a reset discards what
// the client's kernel holds and has not handed over yet, and would cut the query instead), well
// inside the client's idle.
const faultIdleDelay = 200 * time.Millisecond

// afterFirstResponse returns a Faults.Hook that does a at PhaseIdle after the first request's
// response on every connection (the first PhaseIdle of a connection follows the login
// response), faultIdleDelay after that response: every connection serves one query and is then
// dropped while it idles in the pool.
func afterFirstResponse(a tdstest.Action) func(conn int, p tdstest.Phase) tdstest.Action {
	var mu sync.Mutex
	idles := map[int]int{}
	return func(conn int, p tdstest.Phase) tdstest.Action {
		if p != tdstest.PhaseIdle {
			return tdstest.ActionNone
		}
		mu.Lock()
		idles[conn]++
		n := idles[conn]
		mu.Unlock()
		if n != 2 {
			return tdstest.ActionNone
		}
		time.Sleep(faultIdleDelay) // on the connection's goroutine: this connection only
		return a
	}
}

// faultCell is one row of the fault table before it runs: a scenario with one encryption and
// one transport.
type faultCell struct {
	sc        faultScenario
	encrypt   string
	transport string
}

// key names the cell's server in the child's info: "3/plaintext/bridged".
func (c faultCell) key() string {
	return fmt.Sprintf("%s/%s/%s", c.sc.id, encName(c.encrypt), c.transport)
}

// faultCells returns every cell in table order.
func faultCells() []faultCell {
	var cells []faultCell
	for _, sc := range faultScenarios() {
		for _, enc := range sc.encrypts {
			for _, tr := range faultTransports {
				cells = append(cells, faultCell{sc: sc, encrypt: enc, transport: tr})
			}
		}
	}
	return cells
}

// serverConfig is the tdstest configuration of the cell's server.
func (c faultCell) serverConfig() tdstest.Config {
	return tdstest.Config{Encryption: tdstest.EncryptOff, Faults: c.sc.faults()}
}
