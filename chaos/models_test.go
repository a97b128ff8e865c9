package chaos

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The porcupine models of the primitives. Leases break a model without
// time: a hold may end on the server (its lease ran out) with no operation
// in the history. So every model lets a hold end only through an
// operation, and the operations that can end one are the release, the
// holder's Lost (it saw Done close: an interval from its acquisition to
// the moment it saw it), and an Unknown outcome, which may leave an
// orphan: a hold nobody knows of, which its lease ends at any time later.
// The interval checks of Holders cover what this leniency gives away.

// Holder values of the lock models besides client numbers.
const (
	free   = -1
	orphan = -2 // held, by nobody who knows it, until its lease runs out
)

// input and output are the porcupine input and output of an Op.
type input struct {
	Kind   Kind
	Client int
	N      int64
}

type output struct {
	Outcome Outcome
	Token   int64
}

// lockState is the state of a mutex with fencing tokens: who holds it and
// the highest token granted.
type lockState struct {
	Holder int
	Last   int64
}

// mutexModel is an exclusive lock whose every grant carries a token higher
// than all before it. Refused acquisitions carry no information (a lock kept
// for a queued waiter refuses a free lock), and are always legal.
var mutexModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{lockState{Holder: free}} },
	Step: func(st, in, out any) []any {
		s, i, o := st.(lockState), in.(input), out.(output)
		vacant := s.Holder == free || s.Holder == orphan
		switch i.Kind {
		case Acquire:
			switch o.Outcome {
			case OK:
				if vacant && (o.Token == 0 || o.Token > s.Last) {
					return []any{lockState{i.Client, max(s.Last, o.Token)}}
				}
				return nil
			case Unknown:
				if vacant {
					return []any{s, lockState{orphan, s.Last}}
				}
			}
			return []any{s}
		case Release:
			return releaseStep(s, i.Client, o.Outcome)
		case Lost:
			if s.Holder == i.Client {
				return []any{lockState{free, s.Last}}
			}
			return nil
		}
		return nil
	},
	DescribeOperation: describe,
}

// releaseStep is the release of an exclusive hold by client: it must hold
// it if the release succeeded; a refused release (not held) may discover a
// loss; an unknown one may have released it or left it to its lease.
func releaseStep(s lockState, client int, o Outcome) []any {
	freed := lockState{free, s.Last}
	switch {
	case o == OK && s.Holder == client:
		return []any{freed}
	case o == OK:
		return nil
	case s.Holder != client:
		return []any{s}
	case o == Refused:
		return []any{freed}
	default:
		// Unknown: it released the hold, or it did not and the hold is
		// still the client's on the server (a later unlock by its owner
		// may release it), or nobody's once its lease runs out.
		return []any{freed, lockState{orphan, s.Last}, s}
	}
}

// semState is the state of a semaphore: the permits held, by clients that
// know it or by orphans (unknown acquisitions, which a plain semaphore
// never gets back).
type semState struct{ Held int64 }

// semaphoreModel is a semaphore of limit permits.
func semaphoreModel(limit int64) porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Init: func() []any { return []any{semState{}} },
		Step: func(st, in, out any) []any {
			s, i, o := st.(semState), in.(input), out.(output)
			switch {
			case i.Kind == Acquire && o.Outcome == OK:
				if s.Held+i.N <= limit {
					return []any{semState{s.Held + i.N}}
				}
				return nil
			case i.Kind == Acquire && o.Outcome == Unknown && s.Held+i.N <= limit:
				return []any{s, semState{s.Held + i.N}}
			case i.Kind == Acquire:
				return []any{s}
			case i.Kind == Release && o.Outcome == OK:
				return []any{semState{s.Held - i.N}}
			case i.Kind == Release && o.Outcome == Unknown:
				return []any{s, semState{s.Held - i.N}}
			case i.Kind == Release:
				return []any{s}
			}
			return nil
		},
		DescribeOperation: describe,
	}
}

// rwState is the state of a read-write lock: the writer (or free, or an
// orphan) and the set of clients holding a read lock.
type rwState struct {
	Writer  int
	Readers uint64 // bit c: client c holds a read lock
	Orphans bool   // a read lock nobody knows of may still be held
}

// rwModel is a read-write lock of up to 64 clients.
var rwModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{rwState{Writer: free}} },
	Step: func(st, in, out any) []any {
		s, i, o := st.(rwState), in.(input), out.(output)
		bit := uint64(1) << i.Client
		noWriter := s.Writer == free || s.Writer == orphan
		switch i.Kind {
		case Acquire:
			switch {
			case o.Outcome == OK && noWriter && s.Readers == 0:
				return []any{rwState{i.Client, 0, false}}
			case o.Outcome == OK:
				return nil
			case o.Outcome == Unknown && noWriter && s.Readers == 0:
				return []any{s, rwState{orphan, 0, false}}
			}
			return []any{s}
		case RAcquire:
			switch {
			case o.Outcome == OK && noWriter:
				return []any{rwState{free, s.Readers | bit, s.Orphans}}
			case o.Outcome == OK:
				return nil
			case o.Outcome == Unknown && noWriter:
				return []any{s, rwState{free, s.Readers, true}}
			}
			return []any{s}
		case Release, Lost:
			if i.Kind == Lost && s.Writer == i.Client {
				return []any{rwState{free, s.Readers, s.Orphans}}
			}
			if i.Kind == Lost {
				return nil
			}
			var next []any
			for _, ls := range releaseStep(lockState{Holder: s.Writer}, i.Client, o.Outcome) {
				next = append(next, rwState{ls.(lockState).Holder, s.Readers, s.Orphans})
			}
			return next
		case RRelease:
			held := s.Readers&bit != 0
			gone := rwState{s.Writer, s.Readers &^ bit, s.Orphans}
			switch {
			case o.Outcome == OK && held:
				return []any{gone}
			case o.Outcome == OK:
				return nil
			case o.Outcome == Refused || !held:
				return []any{gone}
			}
			return []any{gone, rwState{s.Writer, s.Readers &^ bit, true}}
		}
		return nil
	},
	DescribeOperation: describe,
}

// latchModel is a count-down latch: SetCount sets a count on an open latch
// (count 0), CountDown lowers a positive count, and Await succeeds only on
// an open latch and TryWait runs out only on a closed one.
var latchModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{int64(0)} },
	Step: func(st, in, out any) []any {
		c, i, o := st.(int64), in.(input), out.(output)
		switch i.Kind {
		case SetCount:
			switch {
			case o.Outcome == OK && c == 0:
				return []any{i.N}
			case o.Outcome == OK:
				return nil
			case o.Outcome == Refused && c > 0:
				return []any{c}
			case o.Outcome == Refused:
				return nil
			case c == 0:
				return []any{c, i.N}
			}
			return []any{c}
		case CountDown:
			next := max(c-1, 0)
			if o.Outcome == Unknown {
				return []any{c, next}
			}
			return []any{next}
		case Await:
			if (o.Outcome == OK && c != 0) || (o.Outcome == Refused && c == 0) {
				return nil
			}
			return []any{c}
		}
		return nil
	},
	DescribeOperation: describe,
}

func describe(in, out any) string {
	i, o := in.(input), out.(output)
	s := fmt.Sprintf("c%d %s", i.Client, i.Kind)
	if i.N != 0 {
		s += fmt.Sprintf("(%d)", i.N)
	}
	s += " -> " + o.Outcome.String()
	if o.Token != 0 {
		s += fmt.Sprintf(" #%d", o.Token)
	}
	return s
}
