package fsm

import (
	"errors"
	"testing"
)

type st uint8

const (
	a st = iota
	b
	failed
)

// Move follows the table, records the cause of the failed state once, and reports the state
// it found.
func TestMove(t *testing.T) {
	var m Machine[st]
	m.Init(Table{a: 1<<b | 1<<failed, b: 1 << failed}, failed, a)
	if from, ok := m.Move(a, nil, nil); ok || from != a {
		t.Fatalf("a -> a = %v, %v; want refused", from, ok)
	}
	var seen []st
	if from, ok := m.Move(b, nil, func(from st) { seen = append(seen, from) }); !ok || from != a || m.State() != b {
		t.Fatalf("a -> b = %v, %v; state %v", from, ok, m.State())
	}
	cause := errors.New("cause")
	if _, ok := m.Move(failed, cause, func(from st) { seen = append(seen, from) }); !ok || m.Err() != cause {
		t.Fatalf("b -> failed: %v, err %v", ok, m.Err())
	}
	if _, ok := m.Move(failed, errors.New("later"), nil); ok || m.Err() != cause {
		t.Fatalf("failed -> failed moved, or the first cause is lost: %v", m.Err())
	}
	if len(seen) != 2 || seen[0] != a || seen[1] != b {
		t.Fatalf("moved saw %v, want [a b]", seen)
	}
}
