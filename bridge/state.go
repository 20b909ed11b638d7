package bridge

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/internal/fsm"
)

// State is the mode a Conn is in; the package documentation has the diagram. The zero value is
// StateHandshake.
type State uint8

const (
	// StateHandshake: TLS handshake bytes travel inside PRELOGIN packets.
	StateHandshake State = iota
	// StatePassthrough: TLS records go straight to and from the socket.
	StatePassthrough
	// StatePlaintext: raw bytes in both directions.
	StatePlaintext
	// StateFailed: a permanent error in handshake mode, or while the switch sent the last
	// flight; every later call returns it, and only Close leaves this state.
	StateFailed
	// StateClosed: Close was called; every later call returns an error matching [net.ErrClosed].
	StateClosed
)

var stateNames = [...]string{
	StateHandshake:   "handshake",
	StatePassthrough: "passthrough",
	StatePlaintext:   "plaintext",
	StateFailed:      "failed",
	StateClosed:      "closed",
}

// String returns the lower-case name of the state, or "State(n)".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// transitions[from] is the bit set of the states a Conn may move to from state from.
var transitions = fsm.Table{
	StateHandshake:   1<<StatePassthrough | 1<<StatePlaintext | 1<<StateFailed | 1<<StateClosed,
	StatePassthrough: 1<<StatePlaintext | 1<<StateClosed,
	StatePlaintext:   1 << StateClosed,
	StateFailed:      1 << StateClosed,
	StateClosed:      0,
}

// transition is the one place where a Conn changes state: it moves c to state to if
// transitions allows it, with cause as StateFailed's sticky error. A refused move returns what a
// caller in the current state should see: the sticky error, errClosed, or one wrapping ErrState.
func (c *Conn) transition(to State, cause error) error {
	from, ok := c.sm.Move(to, cause, nil)
	switch {
	case ok:
		return nil
	case from == StateFailed:
		return c.sm.Err()
	case from == StateClosed:
		return errClosed
	}
	return fmt.Errorf("bridge: cannot go from %v to %v: %w", from, to, ErrState)
}

// fail moves c to StateFailed with err, unless c has failed or closed already, and returns the
// error callers now see: err, the earlier sticky error, or errClosed.
func (c *Conn) fail(err error) error {
	if terr := c.transition(StateFailed, err); terr != nil {
		return terr
	}
	return err
}

// stickyErr returns the error for a call made in state s, StateFailed or StateClosed.
func (c *Conn) stickyErr(s State) error {
	if s == StateClosed || c.State() == StateClosed {
		return errClosed
	}
	return c.sm.Err()
}

// start moves c to StatePassthrough or StatePlaintext for the exported method name, holding both
// locks so that no Read or Write is half-way through the old mode.
func (c *Conn) start(to State, name string) error {
	if !c.rmu.TryLock() {
		return fmt.Errorf("bridge: %s: %w", name, ErrReadInProgress)
	}
	defer c.rmu.Unlock()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	from := c.State()
	switch {
	case from == StateFailed || from == StateClosed:
		return c.stickyErr(from)
	case transitions[from]&(1<<to) == 0:
		return fmt.Errorf("bridge: %s in state %v: %w", name, from, ErrState)
	case to == StatePlaintext && c.ra.coalesce > 0:
		return fmt.Errorf("bridge: %s after CoalesceRecords: %w", name, ErrState)
	case from == StateHandshake:
		if err := c.leaveHandshake(to, name); err != nil {
			return err
		}
	}
	if err := c.transition(to, nil); err != nil {
		return err
	}
	if to == StatePlaintext {
		c.ra.plain = true
	}
	return nil
}
