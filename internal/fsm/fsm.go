// Package fsm is the state machine bridge.Conn and mssqlbridge's conn are built on: a state
// that changes only along a table of allowed moves, one move at a time, and a sticky error
// recorded on entering the failed state.
package fsm

import (
	"sync"
	"sync/atomic"
)

// Table lists the allowed moves: Table[from] has bit 1<<to set for every state to that a
// machine in state from may move to. States are below 8.
type Table []uint8

// Machine is a state of type S moving along a Table. The zero value is in state 0 and must
// be given its table with Init before the first Move. State may be called at any time; moves
// are serialized.
type Machine[S ~uint8] struct {
	table  Table
	failed S // the state whose cause Err returns

	mu    sync.Mutex
	state atomic.Uint32 // written only by Move and Init, under mu
	err   error         // the cause given on entering failed; protected by mu
}

// Init gives m its table and failed state, and sets its state to start.
func (m *Machine[S]) Init(t Table, failed, start S) {
	m.table, m.failed = t, failed
	m.state.Store(uint32(start))
}

// State returns the current state; it may change as soon as it returns.
func (m *Machine[S]) State() S { return S(m.state.Load()) }

// Move moves m to state to if the table allows it from the current state, and reports the
// state it found and whether it moved. On entering the failed state it records cause as the
// sticky error. moved, if not nil, runs after the move and before any other, with the lock
// held: it must not call back into m.
func (m *Machine[S]) Move(to S, cause error, moved func(from S)) (from S, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from = S(m.state.Load())
	if int(from) >= len(m.table) || to >= 8 || m.table[from]&(1<<to) == 0 {
		return from, false
	}
	if to == m.failed {
		m.err = cause
	}
	m.state.Store(uint32(to))
	if moved != nil {
		moved(from)
	}
	return from, true
}

// Err returns the cause recorded on entering the failed state, or nil.
func (m *Machine[S]) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
