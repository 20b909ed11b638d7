package bridge

import (
	"errors"
	"net"
	"testing"
)

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{
		StateHandshake: "handshake", StatePassthrough: "passthrough", StatePlaintext: "plaintext",
		StateFailed: "failed", StateClosed: "closed", State(9): "State(9)",
	} {
		if got := s.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
	for r, want := range map[Role]string{RoleClient: "client", RoleServer: "server", Role(7): "Role(7)"} {
		if got := r.String(); got != want {
			t.Errorf("Role(%d).String() = %q, want %q", uint8(r), got, want)
		}
	}
}

// The transition table, move by move: allowed moves change the state,
// refused ones return ErrState (or the sticky / closed error) and leave it.
func TestTransitions(t *testing.T) {
	all := []State{StateHandshake, StatePassthrough, StatePlaintext, StateFailed, StateClosed}
	allowed := map[[2]State]bool{
		{StateHandshake, StatePassthrough}: true, {StateHandshake, StatePlaintext}: true,
		{StateHandshake, StateFailed}: true, {StateHandshake, StateClosed}: true,
		{StatePassthrough, StatePlaintext}: true, {StatePassthrough, StateClosed}: true,
		{StatePlaintext, StateClosed}: true,
		{StateFailed, StateClosed}:    true,
	}
	sticky := errors.New("sticky")
	for _, from := range all {
		for _, to := range all {
			c := connIn(from, sticky)
			err := c.transition(to, sticky)
			if allowed[[2]State{from, to}] {
				if err != nil || c.State() != to {
					t.Errorf("%v -> %v: %v, state %v", from, to, err, c.State())
				}
				continue
			}
			if c.State() != from {
				t.Errorf("%v -> %v refused but state is %v", from, to, c.State())
			}
			switch from {
			case StateFailed:
				if err != sticky {
					t.Errorf("%v -> %v: %v, want the sticky error", from, to, err)
				}
			case StateClosed:
				if !errors.Is(err, net.ErrClosed) {
					t.Errorf("%v -> %v: %v, want net.ErrClosed", from, to, err)
				}
			default:
				if !errors.Is(err, ErrState) {
					t.Errorf("%v -> %v: %v, want ErrState", from, to, err)
				}
			}
		}
	}
}

// The first error wins.
func TestFailKeepsFirstError(t *testing.T) {
	c := connIn(StateHandshake, nil)
	first, second := errors.New("first"), errors.New("second")
	if got := c.fail(first); got != first {
		t.Fatalf("fail = %v", got)
	}
	if got := c.fail(second); got != first {
		t.Fatalf("second fail = %v, want the first error", got)
	}
}

// connIn returns a Conn (without a socket) in state s; in StateFailed its
// sticky error is sticky.
func connIn(s State, sticky error) *Conn {
	c := &Conn{}
	if s == StateFailed {
		c.sm.Init(transitions, StateFailed, StateHandshake)
		c.sm.Move(StateFailed, sticky, nil)
		return c
	}
	c.sm.Init(transitions, StateFailed, s)
	return c
}
