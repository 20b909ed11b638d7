package bridge

import "sync/atomic"

// readSteer is the channel between a Reader and the Conn under its
// tls.Conn. The Reader's calls reach the Conn only through crypto/tls, so
// it cannot hold the Conn's read lock: each side writes its own half, as
// atomics, and reads the other's.
//
// Contract:
//   - The Reader alone sets the mode, before and after its Reads of the
//     tls.Conn: coalesce(n) with n > 0 lets a passthrough Read hand over,
//     after the current record, the records readyRecord(n) approves (0
//     ends it); setNoBlock(true) makes a passthrough Read fail at once with
//     errWouldBlock instead of reading the socket.
//   - The Conn's passthrough Read alone (under rmu) reports: begin for
//     every Read in passthrough mode, handed with the number of records that
//     Read began beyond its first.
//   - The Reader compares reads() before and after a tls.Conn Read to learn
//     whether the tls.Conn read the Conn at all, and then lastExtra() for
//     how many more records that Read handed over. The counts are hints for
//     ending batches early; the data is right whatever they say.
type readSteer struct {
	minLen  atomic.Int32
	noBlock atomic.Bool
	calls   atomic.Uint64
	extra   atomic.Int32
}

// coalesce sets the threshold of the coalescing mode; 0 turns it off.
func (s *readSteer) coalesce(minLen int32) { s.minLen.Store(minLen) }

// setNoBlock turns the no-block mode on or off.
func (s *readSteer) setNoBlock(on bool) { s.noBlock.Store(on) }

// mode returns the threshold of the coalescing mode (0: off) and whether
// the no-block mode is on.
func (s *readSteer) mode() (minLen int, noBlock bool) {
	return int(s.minLen.Load()), s.noBlock.Load()
}

// begin counts a Read in passthrough mode.
func (s *readSteer) begin() { s.calls.Add(1) }

// handed records how many records the current Read began beyond its first.
func (s *readSteer) handed(extra int) { s.extra.Store(int32(extra)) }

// reads returns the number of Reads in passthrough mode so far.
func (s *readSteer) reads() uint64 { return s.calls.Load() }

// lastExtra returns what the last handed call recorded.
func (s *readSteer) lastExtra() int { return int(s.extra.Load()) }
