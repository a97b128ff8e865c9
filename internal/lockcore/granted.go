package lockcore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

// Granted keeps a lock's hold granted by a release (see handoff.Grace) at At, as
// Clock dated it: until it is taken, the hold lasts the grace from then; at
// handoff.TakeAfter a renewal extends it to the lock's lease, and from its answer
// on the lock's own keeper (the watchdog, or the fixed lease) keeps it. A
// hold re-entered before then was taken by the re-entry; one released
// before then needs nothing.
type Granted struct {
	Sender rt.Sender     // the lock's send path
	Name   string        // the lock's hash
	Grant  string        // the lock's grant key, which a take deletes
	Lease  time.Duration // the lock's TTL, which a take sets
	// Then is the lock's own keeper, which keeps the hold once taken.
	Then hold.Keeper
	// Release gives a plain hold back on the server (see giveBack).
	Release func(ctx context.Context, id string)
	At      time.Time // when the grant was made, at the soonest
	Plain   bool      // the owner id is the hold's alone (see giveBack)
}

// Take is the renewal that takes a granted hold, and extends a hold of a
// lock that grants: it sets the lease as lease.HashLock does, and deletes
// the lock's grant key, which would otherwise outlive a lease shorter
// than the grace and keep newcomers out of the free lock until the grace
// ended. A hold's KEYS are the lock and its grant key.
var Take = &lease.Kind{Script: "lock_take", KeysPerItem: 2, ArgsPerItem: 1}

// Keep starts keeping owner id's granted hold (a hold.Keeper).
func (g Granted) Keep(id string, _ time.Time, lost func(error)) hold.Keeping {
	k := &taking{g: g, id: id, lost: lost, until: lease.ValidUntil(g.At, handoff.Grace)}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expiry = time.AfterFunc(time.Until(k.until), func() {
		k.end(fmt.Errorf("%w: granted hold not taken within its grace of %v", lockerr.ErrLost, handoff.Grace))
	})
	k.timer = time.AfterFunc(time.Until(g.At.Add(handoff.TakeAfter)), k.take)
	return k
}

// taking is the Keeping of a granted hold.
type taking struct {
	g     Granted
	id    string
	lost  func(error)
	back  sync.Once // see giveBack
	until time.Time // when the grant's lease may end

	mu     sync.Mutex
	expiry *time.Timer
	timer  *time.Timer  // the take, or its retry
	inner  hold.Keeping // the lock's own keeping, once taken
	over   bool         // stopped or lost
	lapsed bool         // declared lost here: the grant ran out untaken
	unsure bool         // a take went unanswered: it may have applied
	sent   bool         // a take was sent
}

// take extends the hold to the lock's lease, retrying errors until the
// grant's lease may have ended (the expiry then declares it lost). A take
// that may have applied on the server although the hold was declared lost
// here would leave the lock held by nobody for a whole lease: the hold is
// then given back.
func (k *taking) take() {
	k.mu.Lock()
	k.sent = true
	k.mu.Unlock()
	sent := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), k.until)
	rep := k.g.Sender.Send(ctx, scripts.Renewal(scripts.Get(Take.Script),
		[]string{k.g.Name, k.g.Grant}, []any{scripts.Ms(k.g.Lease), k.id}))
	cancel()
	res, err := scripts.Ints(rep.Cmd)
	if err == nil {
		err = rep.SyncErr() // not taken where a failover could lose it
	}
	switch {
	case err != nil:
		k.mu.Lock()
		k.unsure = true
		lapsed := k.lapsed
		if !k.over && k.inner == nil && time.Now().Before(k.until) {
			k.timer = time.AfterFunc(10*time.Millisecond, k.take)
		}
		k.mu.Unlock()
		if lapsed {
			k.giveBack()
		}
	case len(res) == 1 && res[0] == 1:
		k.mu.Lock()
		lapsed := k.lapsed
		if !k.over && k.inner == nil {
			k.expiry.Stop()
			k.inner = k.g.Then.Keep(k.id, sent, k.lost)
		}
		k.mu.Unlock()
		if lapsed {
			k.giveBack() // taken on the server after it was declared lost here
		}
	default:
		k.end(fmt.Errorf("%w: granted hold gone before it was taken", lockerr.ErrLost))
	}
}

// end declares the hold lost, unless it was taken, stopped or lost.
func (k *taking) end(err error) {
	k.mu.Lock()
	if k.over || k.inner != nil {
		k.mu.Unlock()
		return
	}
	k.over, k.lapsed = true, true
	k.timer.Stop()
	unsure := k.unsure
	k.mu.Unlock()
	k.lost(err)
	if unsure {
		k.giveBack()
	}
}

// giveBack releases, on the server, a grant declared lost here that a take
// may have extended there, once. Only a plain hold's: its owner id is its
// own, whereas an owner that may re-enter may hold the lock anew by then,
// and its grant is left to run out with the lease, as a renewal that
// applies after its hold was declared lost is.
func (k *taking) giveBack() {
	if !k.g.Plain {
		return
	}
	k.back.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait.AbandonTimeout)
		defer cancel()
		k.g.Release(ctx, k.id)
	})
}

// Again hands the hold to the lock's keeper: a re-entry reset its lease.
func (k *taking) Again(started time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.over:
	case k.inner != nil:
		k.inner.Again(started)
	default:
		k.expiry.Stop()
		k.timer.Stop()
		k.inner = k.g.Then.Keep(k.id, started, k.lost)
	}
}

// Extend: an extension answered takes the grant, as a take would; but a
// take sent before it may apply after it, setting the lock's lease, so the
// hold is then known valid for the shorter of the two. One unanswered may
// have shortened the grant's lease.
func (k *taking) Extend(sent time.Time, d time.Duration, sure bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.over:
	case k.inner != nil:
		k.inner.Extend(sent, d, sure)
	case !sure:
		if end := lease.ValidUntil(sent, d); end.Before(k.until) {
			k.until = end
			k.expiry.Reset(time.Until(end))
		}
	default:
		k.expiry.Stop()
		k.timer.Stop()
		k.inner = k.g.Then.Keep(k.id, sent, k.lost)
		k.inner.Extend(sent, d, !k.sent)
	}
}

// Until is the grant's own end until it is taken, then the lock's keeper's.
func (k *taking) Until() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inner != nil {
		return k.inner.Until()
	}
	return k.until
}

func (k *taking) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.over = true
	k.expiry.Stop()
	k.timer.Stop()
	if k.inner != nil {
		k.inner.Stop()
	}
}
