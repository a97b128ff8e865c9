package chaos

import (
	"slices"
	"sync"
	"time"
)

// Kind is what an operation of a history did.
type Kind uint8

const (
	Acquire   Kind = iota // Lock, a write lock, or Acquire of N permits
	Release               // Unlock of a lock or write lock, or Release of N permits
	Lost                  // the holder saw its hold's Done channel closed
	RAcquire              // a read lock
	RRelease              // a read unlock
	CountDown             // a latch count-down
	Await                 // a latch wait
	SetCount              // TrySetCount of a latch to N
)

var kindNames = [...]string{"acquire", "release", "lost", "racquire", "rrelease", "countdown", "await", "setcount"}

func (k Kind) String() string { return kindNames[k] }

// Outcome is how an operation ended.
type Outcome uint8

const (
	OK      Outcome = iota // it did what it was asked
	Refused                // a definite no: not acquired within the wait, not held, latch not open
	Unknown                // an error: it may or may not have been applied
)

var outcomeNames = [...]string{"ok", "refused", "unknown"}

func (o Outcome) String() string { return outcomeNames[o] }

// An Op is one operation of a history: who called what on which name, when
// (nanoseconds on the history's monotonic clock), and how it ended.
type Op struct {
	Client  int
	Name    string
	Kind    Kind
	Outcome Outcome
	Token   int64 // fencing token of an acquisition, if any
	N       int64 // permits acquired or released; the count of a SetCount
	Call    int64
	Return  int64
}

// A History records operations against one monotonic clock. It is safe for
// concurrent use.
type History struct {
	base time.Time
	mu   sync.Mutex
	ops  []Op
}

func newHistory() *History { return &History{base: time.Now()} }

// Now reads the history's clock: the monotonic time since it was made.
func (h *History) Now() int64 { return int64(time.Since(h.base)) }

// Add records op, whose Call and Return were read from Now.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns a copy of the operations recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// Len returns the number of operations recorded so far.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// byName splits ops by the name they work on, keeping their order.
func byName(ops []Op) map[string][]Op {
	m := make(map[string][]Op)
	for _, op := range ops {
		m[op.Name] = append(m[op.Name], op)
	}
	return m
}
