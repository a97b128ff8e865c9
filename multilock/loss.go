package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
)

// A LossReporter is a Member that tells when its holds end, as
// *mutex.Mutex, *fairlock.Mutex, the rwlock read and write handles,
// *redlock.Mutex and *MultiLock do: Done returns a channel that is closed
// when the member's latest hold ends, and Err then returns an error
// matching latchkey.ErrLost if it ended without an unlock.
//
// A MultiLock watches the members that are LossReporters, and its hold ends
// with the first of their holds to end without its Unlock. The loss of any
// other member goes unseen until Unlock reports the member not held.
//
// A MultiLock asks for a member's Done right after taking it. Should other
// goroutines take the same handle at that moment, such as readers sharing
// an rwlock's read side, Done may already report another of its holds,
// whose end the MultiLock then takes for the end of its own.
type LossReporter interface {
	Member
	Done() <-chan struct{}
	Err() error
}

var _ LossReporter = (*MultiLock)(nil)

// Done returns a channel that is closed when the current hold of m ends,
// by Unlock or by the loss of a member; Err then tells which. If m is not
// held, Done returns the channel of the last hold, or a closed channel if
// there was none. To watch one acquisition whatever else the MultiLock
// takes, use LockContext.
func (m *MultiLock) Done() <-chan struct{} { return m.holds.Done(hold.Any) }

// Err returns nil while m is held and after its last hold was released by
// Unlock. After a hold ended because one of its members' holds ended
// without m's Unlock (see LossReporter), Err returns an error matching
// latchkey.ErrLost that names that member and says why. The other members
// are still held then: Unlock releases them, and reports the lost one.
func (m *MultiLock) Err() error { return m.holds.Err(hold.Any) }

// LockContext acquires m as Lock does and returns a copy of ctx that is
// cancelled when this hold ends: when it is unlocked (its last count, with
// an owner), or when a member is lost, and then context.Cause reports an
// error matching latchkey.ErrLost that names the member. Work done under the
// hold can watch the returned context, whoever else uses the MultiLock;
// Done and Err report on its latest hold instead.
func (m *MultiLock) LockContext(ctx context.Context) (context.Context, error) {
	h, err := m.lock(ctx, -1)
	if h == nil {
		return nil, err
	}
	return m.holds.Context(ctx, h), nil
}

// book records an acquisition of every member by the owner in ctx, or a
// plain one, watching the ends of the members' holds in seen.
func (m *MultiLock) book(ctx context.Context, seen []<-chan struct{}) *hold.Hold {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		// A fresh key per plain hold, so that goroutines sharing m each
		// have their own, as with a member's plain holds.
		id = owner.New()
	}
	return m.holds.Acquired(id, id, 0, !reentrant, 0, time.Now(), watcher{m, seen})
}

// doneOf returns the channel of member i's latest hold, or nil if the
// member does not report its holds' ends.
func (m *MultiLock) doneOf(i int) <-chan struct{} {
	if r := m.reporters[i]; r != nil {
		return r.Done()
	}
	return nil
}

// settle closes the books on the count of h that an Unlock released (the
// last one if last), given the members' errors: a member found not held
// means that h was lost, whether or not its watcher saw it yet.
func (m *MultiLock) settle(h *hold.Hold, last bool, errs []error) {
	var lost error
	for i, err := range errs {
		if errors.Is(err, lockerr.ErrNotHeld) {
			lost = fmt.Errorf("multilock: %s: %w: found not held at Unlock", m.label(i), lockerr.ErrLost)
			break
		}
	}
	switch {
	case last:
		m.holds.Finish(h, lost)
	case lost != nil:
		m.holds.Lose(h, lost)
	}
}

// lostErr says why member i's hold ended without m's Unlock.
func (m *MultiLock) lostErr(i int) error {
	err := m.reporters[i].Err()
	switch {
	case errors.Is(err, lockerr.ErrLost):
	case err != nil:
		err = fmt.Errorf("%w: %w", lockerr.ErrLost, err)
	default:
		// Released by someone else's unlock, or lost while the handle
		// took a new hold, whose Err the member reports on now.
		err = fmt.Errorf("%w: its hold ended without the MultiLock's Unlock", lockerr.ErrLost)
	}
	return fmt.Errorf("%s: %w", m.label(i), err)
}

// label names member i in errors: its index, and its name if it has one,
// else its type.
func (m *MultiLock) label(i int) string {
	if n, ok := m.locks[i].(interface{ Name() string }); ok {
		return fmt.Sprintf("member %d %q", i, n.Name())
	}
	return fmt.Sprintf("member %d (%T)", i, m.locks[i])
}

// A watcher keeps a MultiLock hold as long as its members' holds last: one
// goroutine per hold waits for the first of them to end, and ends the
// MultiLock's hold with it.
type watcher struct {
	m    *MultiLock
	seen []<-chan struct{} // by member; nil for one that does not report
}

func (w watcher) Keep(_ string, _ time.Time, lost func(error)) hold.Keeping {
	// The number of members is only known at run time: one select over
	// them all keeps it to one goroutine per hold.
	var (
		cases   []reflect.SelectCase
		members []int
	)
	for i, c := range w.seen {
		if c != nil {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
			members = append(members, i)
		}
	}
	k := &watching{stop: make(chan struct{})}
	if len(cases) == 0 {
		return k
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(k.stop)})
	go func() {
		if i, _, _ := reflect.Select(cases); i < len(members) {
			lost(w.m.lostErr(members[i]))
		}
	}()
	return k
}

// watching is what keeps one MultiLock hold. Stop runs under the books'
// lock, which lost takes: it only signals the goroutine, never waits for it.
type watching struct {
	once sync.Once
	stop chan struct{}
}

// Again keeps watching the channels of the first acquisition: a re-entry
// by the same owner took the same member holds once more.
func (k *watching) Again(time.Time) {}

// Extend does nothing: the members keep their own leases.
func (k *watching) Extend(time.Time, time.Duration, bool) {}

// Until is the zero time: a MultiLock knows no validity of its own, and
// nothing asks it for one.
func (k *watching) Until() time.Time { return time.Time{} }

func (k *watching) Stop() { k.once.Do(func() { close(k.stop) }) }
