package hold

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/lease"
)

// bound is how long a test waits for what must happen; it only catches
// what never does, on a loaded machine under -race.
const bound = 10 * time.Second

// lostCalls records a Keeper's calls of lost.
type lostCalls struct {
	mu   sync.Mutex
	n    int
	at   time.Time
	err  error
	once sync.Once
	c    chan struct{}
}

func newLostCalls() *lostCalls { return &lostCalls{c: make(chan struct{})} }

func (l *lostCalls) lost(err error) {
	now := time.Now()
	l.mu.Lock()
	l.n++
	if l.n == 1 {
		l.at, l.err = now, err
	}
	l.mu.Unlock()
	l.once.Do(func() { close(l.c) })
}

// wait waits for the first call and returns when it came and its error.
func (l *lostCalls) wait(t *testing.T) (time.Time, error) {
	t.Helper()
	select {
	case <-l.c:
	case <-time.After(bound):
		t.Fatalf("lost not called within %v", bound)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at, l.err
}

func (l *lostCalls) calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// A fixed lease is declared lost at its lease less the drift allowance
// from the acquisition's start, never sooner.
func TestFixed_declaresLoss(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	l := newLostCalls()
	started := time.Now()
	k := Fixed(d).Keep("o", started, l.lost)
	defer k.Stop()
	at, err := l.wait(t)
	if earliest := started.Add(d - lease.Drift(d)); at.Before(earliest) {
		t.Errorf("declared lost %v after the start, before the lease less drift (%v)", at.Sub(started), d-lease.Drift(d))
	}
	if !errors.Is(err, latchkey.ErrLost) || !strings.Contains(err.Error(), d.String()) {
		t.Errorf("lost(%v): want ErrLost naming the lease %v", err, d)
	}
	time.Sleep(50 * time.Millisecond)
	if n := l.calls(); n != 1 {
		t.Errorf("lost called %d times, want once", n)
	}
}

// A lease that ran out before Keep is declared lost at once, and not by
// Keep's caller.
func TestFixed_alreadyExpired(t *testing.T) {
	t.Parallel()
	l := newLostCalls()
	k := Fixed(time.Second).Keep("o", time.Now().Add(-time.Hour), l.lost)
	defer k.Stop()
	l.wait(t)
}

// Again restarts the lease from the re-entry's start, as the script reset
// the key's TTL.
func TestFixed_Again(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	l := newLostCalls()
	k := Fixed(d).Keep("o", time.Now(), l.lost)
	defer k.Stop()
	again := time.Now().Add(200 * time.Millisecond)
	k.Again(again)
	at, _ := l.wait(t)
	if earliest := again.Add(d - lease.Drift(d)); at.Before(earliest) {
		t.Errorf("declared lost %v before the re-entry's lease ran out", earliest.Sub(at))
	}
}

func TestFixed_Stop(t *testing.T) {
	t.Parallel()
	const d = 20 * time.Millisecond
	l := newLostCalls()
	k := Fixed(d).Keep("o", time.Now(), l.lost)
	k.Stop()
	time.Sleep(20 * d) // far past the lease
	if n := l.calls(); n != 0 {
		t.Errorf("lost called %d times after Stop", n)
	}
}

// A Table kept by Fixed ends the hold as lost when its lease runs out.
func TestFixed_inTable(t *testing.T) {
	t.Parallel()
	tb := New("mutex", "orders")
	tb.Acquired("o", "o", 0, false, 0, time.Now(), Fixed(30*time.Millisecond))
	select {
	case <-tb.Done(Any):
	case <-time.After(bound):
		t.Fatalf("hold not declared lost within %v", bound)
	}
	if err := tb.Err(Any); !errors.Is(err, latchkey.ErrLost) || !strings.HasPrefix(err.Error(), what) {
		t.Errorf("Err = %v, want ErrLost prefixed with %q", err, what)
	}
	if !tb.WasLost("o") {
		t.Error("WasLost false after the lease ran out")
	}
}

// A fixed lease's known validity follows the extensions: one sent after the
// latest answer sets it, while one that overlapped another, or went
// unanswered, may have applied in either order and can only shorten it.
func TestFixed_extend(t *testing.T) {
	l := newLostCalls()
	const d = time.Hour
	start := time.Now()
	k := Fixed(d).Keep("id", start, l.lost)
	defer k.Stop()
	valid := func(sent time.Time, d time.Duration) time.Time { return sent.Add(d - lease.Drift(d)) }
	if got := k.Until(); !got.Equal(valid(start, d)) {
		t.Fatalf("Until after Keep = %v, want %v", got, valid(start, d))
	}

	later := time.Now()
	k.Extend(later, 2*d, true)
	if got := k.Until(); !got.Equal(valid(later, 2*d)) {
		t.Errorf("Until after an answered extension = %v, want %v", got, valid(later, 2*d))
	}
	k.Extend(start, 3*d, true) // sent before the previous answer: overlapped
	if got := k.Until(); !got.Equal(valid(later, 2*d)) {
		t.Errorf("an overlapping longer extension moved Until to %v", got)
	}
	k.Extend(start, d/2, true) // overlapped, shorter: may have applied last
	if got := k.Until(); !got.Equal(valid(start, d/2)) {
		t.Errorf("Until after an overlapping shorter extension = %v, want %v", got, valid(start, d/2))
	}
	k.Extend(time.Now(), 4*d, false)
	if got := k.Until(); !got.Equal(valid(start, d/2)) {
		t.Errorf("an unanswered extension moved Until later, to %v", got)
	}
	k.Extend(time.Now(), time.Millisecond, false) // may have applied: the lease runs out
	select {
	case <-l.c:
	case <-time.After(bound):
		t.Fatal("not declared lost after an unanswered extension to 1ms")
	}
}
