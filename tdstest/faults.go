package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Phase is a point in a connection's life where a fault can be injected.
type Phase uint8

const (
	// PhaseNone never fires.
	PhaseNone Phase = iota
	// PhasePrelogin: the client's PRELOGIN has been read; the reply has not been sent. In strict
	// mode this is the PRELOGIN inside TLS.
	PhasePrelogin
	// PhaseHandshake: the PRELOGIN reply has been sent and TLS is to start; the fault replaces
	// or mutates the server's first handshake flight. In strict mode: the first byte of the
	// ClientHello has been seen, nothing has been written. Not reached without TLS.
	PhaseHandshake
	// PhaseLogin: LOGIN7 has been read and accepted; the login response has not been sent.
	PhaseLogin
	// PhaseQuery: a SQL batch has been read; its response has not been sent.
	PhaseQuery
	// PhaseResult: in the middle of a query response, after its first packet has been sent. A
	// response of a single packet is not affected.
	PhaseResult
	// PhaseIdle: a response (the login response, or a request's) has been sent in full and the
	// server is about to wait for the next request, as on a pooled connection. ActionClose,
	// ActionCloseNotify and ActionReset close the connection at once, while the client idles
	// (a server, load balancer or NAT dropping an idle connection); ActionError sends an
	// unsolicited ERROR (596, class 21) in a message of its own and then closes the connection
	// (FIN), as SQL Server does to a session KILL ends. Reached once per response: use Hook to
	// pick which.
	PhaseIdle
)

var phaseNames = [...]string{"none", "prelogin", "handshake", "login", "query", "result", "idle"}

// String returns the lower-case name of the phase.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Action is what the server does when a fault fires.
type Action uint8

const (
	// ActionNone does nothing.
	ActionNone Action = iota
	// ActionClose closes the TCP connection (FIN) without another byte.
	ActionClose
	// ActionReset closes the TCP connection with a RST (SO_LINGER 0).
	ActionReset
	// ActionStall stops answering: the server reads and discards what the client sends until
	// the client closes the connection or the server is closed.
	ActionStall
	// ActionWrongType sends the next packet with packet type SQLBatch (0x01), a type no server
	// sends, then closes the connection. At PhaseHandshake the packet is the first one of the
	// server's handshake flight.
	ActionWrongType
	// ActionBadLength sends the next packet with a header Length of 4 (shorter than the header
	// itself), then closes the connection.
	ActionBadLength
	// ActionError fails the step with an error token where the phase has one: at PhaseLogin the
	// client gets "Login failed" (18456) and the connection closes; at PhaseQuery and
	// PhaseResult the batch gets ERROR 50000 and the connection stays usable; at PhaseIdle see
	// there. At PhasePrelogin and PhaseHandshake it closes the connection.
	ActionError
	// ActionCloseNotify ends the TLS session the way TLS stacks do it (OpenSSL's SSL_shutdown):
	// a close_notify alert, then FIN, so that a record lies unread in front of the close. Where
	// the connection has no TLS session at that point (no encryption, login-only encryption
	// after the login) it is ActionClose.
	ActionCloseNotify
	// ActionEarlyError, at PhaseQuery, answers the batch the way SQL Server answers one whose
	// first statement fails and whose later statements PRINT: after earlyErrorDelay, ERROR
	// 50000 and a DONE with the error and more bits, then INFO messages over earlyErrorPackets
	// packets, then the final DONE. go-mssqldb returns the error at the first DONE while its
	// reader goroutine still reads the rest, so the client's next request is written while
	// that response is unread. The connection stays usable. At other phases it does nothing.
	ActionEarlyError
)

var actionNames = [...]string{
	ActionNone:        "none",
	ActionClose:       "close",
	ActionReset:       "reset",
	ActionStall:       "stall",
	ActionWrongType:   "wrong-type",
	ActionBadLength:   "bad-length",
	ActionError:       "error",
	ActionCloseNotify: "close-notify",
	ActionEarlyError:  "early-error",
}

// String returns the lower-case name of the action.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// EveryOther returns a Faults.Hook that does a the first, third, fifth, ... time each
// connection reaches phase p, and nothing otherwise: with ActionEarlyError at PhaseQuery, every
// other request of a connection gets the early-error response and the one after it an ordinary
// answer. It is safe for concurrent use by several connections.
func EveryOther(p Phase, a Action) func(conn int, phase Phase) Action {
	var mu sync.Mutex
	reached := map[int]int{}
	return func(conn int, phase Phase) Action {
		if phase != p {
			return ActionNone
		}
		mu.Lock()
		defer mu.Unlock()
		reached[conn]++
		if reached[conn]%2 == 1 {
			return a
		}
		return ActionNone
	}
}

// Faults makes the server misbehave on purpose. The zero value injects nothing.
type Faults struct {
	// At and Action: at phase At, do Action (on the connections Conn selects).
	At     Phase
	Action Action
	// Conn selects the connection the fault applies to, counting accepted connections from 1;
	// 0 means every connection.
	Conn int
	// Times limits the number of times the At/Action fault fires on one connection (PhaseQuery
	// and PhaseResult are reached once per batch); 0 means every time. At PhaseResult a response
	// counts once it is armed, even if it turns out to fit in one packet and nothing happens.
	Times int
	// ReplyNotSup makes the server answer every PRELOGIN with ENCRYPTION NOT_SUP and continue in
	// plaintext, whatever its setting and the client's value: a downgrade attack that strips
	// encryption. A correct client that asked for encryption must refuse to go on.
	ReplyNotSup bool
	// Hook, if set, is called at every phase of every connection (conn counts from 1) and its
	// result replaces At, Action, Conn and Times. It runs on the connection's goroutine and must
	// be safe for concurrent use by several connections.
	Hook func(conn int, phase Phase) Action
}

func (f *Faults) validate() error {
	if int(f.At) >= len(phaseNames) {
		return fmt.Errorf("tdstest: Faults.At: unknown %v", f.At)
	}
	if int(f.Action) >= len(actionNames) {
		return fmt.Errorf("tdstest: Faults.Action: unknown %v", f.Action)
	}
	if f.Conn < 0 || f.Times < 0 {
		return fmt.Errorf("tdstest: Faults.Conn and Faults.Times must not be negative")
	}
	return nil
}

// faultState is one connection's view of Faults.
type faultState struct {
	f     *Faults
	conn  int
	fired int
}

// at returns the action to take at phase p (ActionNone if none) and counts it.
func (s *faultState) at(p Phase) Action {
	if s.f.Hook != nil {
		return s.f.Hook(s.conn, p)
	}
	if s.f.At != p || s.f.Action == ActionNone || (s.f.Conn != 0 && s.f.Conn != s.conn) {
		return ActionNone
	}
	if s.f.Times != 0 && s.fired >= s.f.Times {
		return ActionNone
	}
	s.fired++
	return s.f.Action
}

// faultError reports that a fault fired and the connection must carry out Action.
type faultError struct {
	Phase  Phase
	Action Action
}

func (e *faultError) Error() string {
	return fmt.Sprintf("tdstest: fault injected at %v: %v", e.Phase, e.Action)
}

// isMutation reports whether a is carried out on the next packet written.
func (a Action) isMutation() bool { return a == ActionWrongType || a == ActionBadLength }

// mutatePacket applies a mutation to a copy of one TDS packet.
func mutatePacket(p []byte, a Action) []byte {
	q := append([]byte(nil), p...)
	if len(q) < 8 {
		return q
	}
	switch a {
	case ActionWrongType:
		q[0] = 0x01
	case ActionBadLength:
		binary.BigEndian.PutUint16(q[2:], 4)
	}
	return q
}

// faultWriter sits under a tds.Writer (or under the bridge during the handshake), where each
// Write is one TDS packet. When armed it lets a number of packets pass, then either mutates the
// next packet and writes it, or writes nothing; either way that Write returns a *faultError. It
// is safe for use by one writer goroutine plus arm/disarm from the same goroutine; mu guards the
// state for the bridge, which may write from its Read path.
type faultWriter struct {
	w io.Writer

	mu     sync.Mutex
	armed  bool
	skip   int // packets to let through before firing
	action Action
	phase  Phase
}

// arm makes the fault fire after skip more packets.
func (f *faultWriter) arm(p Phase, a Action, skip int) {
	f.mu.Lock()
	f.armed, f.phase, f.action, f.skip = true, p, a, skip
	f.mu.Unlock()
}

func (f *faultWriter) disarm() {
	f.mu.Lock()
	f.armed = false
	f.mu.Unlock()
}

// Write writes one packet, applying an armed fault.
func (f *faultWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	if !f.armed {
		f.mu.Unlock()
		return f.w.Write(p)
	}
	if f.skip > 0 {
		f.skip--
		f.mu.Unlock()
		return f.w.Write(p)
	}
	f.armed = false
	ferr := &faultError{Phase: f.phase, Action: f.action}
	f.mu.Unlock()
	if ferr.Action.isMutation() {
		if _, err := f.w.Write(mutatePacket(p, ferr.Action)); err != nil {
			return 0, errors.Join(ferr, err)
		}
	}
	return 0, ferr
}
