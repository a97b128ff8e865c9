package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// handoffWait bounds each step of a handoff: the waiter falling asleep,
// and its Lock returning after the release.
const handoffWait = time.Minute

// A tryLocker is a Locker whose waiter polls: TryLock tries once.
type tryLocker interface {
	Locker
	TryLock(ctx context.Context) (bool, error)
}

// handoffOp alternates two clients on one lock: one holds it while the
// other's Lock waits; once the waiter sleeps (its probe says so), the
// holder unlocks, and the waiter's Lock returns holding it. Then they
// swap. One op is one such acquisition. A poller's waiter instead tries
// once (refused), the holder unlocks, and it tries again (taken): the
// least a poller pays for a handoff.
func handoffOp(ctx context.Context, env *Env, im *Impl, cs *Clients, probes [2]*waitProbe) (func(context.Context) error, func(), error) {
	name := env.Name("instructions", im.Name)
	var hs [2]Locker
	for i := range hs {
		h, err := handle[Locker](ctx, im, cs.List[i], name)
		if err != nil {
			return nil, nil, err
		}
		hs[i] = h
	}
	if err := hs[0].Lock(ctx); err != nil {
		return nil, nil, err
	}
	cur := 0 // the holder
	end := func() { _ = hs[cur].Unlock(context.WithoutCancel(ctx)) }
	if t0, ok := hs[0].(tryLocker); ok {
		t1 := hs[1].(tryLocker)
		ts := [2]tryLocker{t0, t1}
		return func(ctx context.Context) error {
			if err := pollHandoff(ctx, ts[cur], ts[1-cur]); err != nil {
				return err
			}
			cur = 1 - cur
			return nil
		}, end, nil
	}
	if probes[0].refused == nil {
		return nil, nil, fmt.Errorf("no probe tells when a waiter of %s sleeps", im.Name)
	}
	return func(ctx context.Context) error {
		if err := sleepHandoff(ctx, hs[cur], hs[1-cur], probes[1-cur]); err != nil {
			return err
		}
		cur = 1 - cur
		return nil
	}, end, nil
}

// errEarly is a waiter whose Lock returned before the holder's Unlock
// was called: a violation of mutual exclusion.
var errEarly = errors.New("violation: the waiter's Lock returned while the lock was held")

// sleepHandoff hands the lock from holder to waiter, which sleeps until
// the release: p says when it does.
func sleepHandoff(ctx context.Context, holder, waiter Locker, p *waitProbe) error {
	asleep := p.arm()
	var released atomic.Bool
	got := make(chan error, 1)
	go func() {
		err := waiter.Lock(ctx)
		if err == nil && !released.Load() {
			err = errEarly
		}
		got <- err
	}()
	select {
	case <-asleep:
	case err := <-got:
		return fmt.Errorf("the waiter's Lock returned before it slept: %v", err)
	case <-time.After(handoffWait):
		return fmt.Errorf("the waiter did not fall asleep within %v", handoffWait)
	}
	released.Store(true)
	if err := holder.Unlock(ctx); err != nil {
		return fmt.Errorf("the holder's Unlock: %w", err)
	}
	select {
	case err := <-got:
		return err
	case <-time.After(handoffWait):
		return fmt.Errorf("the waiter's Lock did not return within %v of the release", handoffWait)
	}
}

// pollHandoff hands the lock from holder to a polling waiter.
func pollHandoff(ctx context.Context, holder, waiter tryLocker) error {
	switch ok, err := waiter.TryLock(ctx); {
	case err != nil:
		return err
	case ok:
		return errEarly
	}
	if err := holder.Unlock(ctx); err != nil {
		return fmt.Errorf("the holder's Unlock: %w", err)
	}
	switch ok, err := waiter.TryLock(ctx); {
	case err != nil:
		return err
	case !ok:
		return errors.New("the waiter's try after the release did not take the lock")
	}
	return nil
}

// A waitProbe tells when a waiter's Lock sleeps: after the refused
// attempts that precede the sleep, which it sees as the replies of its
// client's commands (its saw is a cmdHook's after).
type waitProbe struct {
	refused func(redis.Cmder) bool // an attempt that left the lock to its holder
	before  int                    // how many such attempts a Lock makes before it sleeps

	mu     sync.Mutex
	left   int
	asleep chan struct{}
}

// newWaitProbe returns the probe for impl's waiters, or one whose refused
// is nil when the bench does not know when they sleep.
func newWaitProbe(impl string) *waitProbe {
	p := &waitProbe{}
	switch impl {
	case targetImpl:
		// latchkey sleeps once an attempt queued it: mutex_acquire's
		// {0, pttl, rank, ...} with a rank of 0 or more (a try that does
		// not queue answers rank -1; a first try may be mutex_take_free).
		sha := scripts.Get("mutex_acquire").Hash()
		p.refused, p.before = func(c redis.Cmder) bool {
			vs, ok := scriptInts(c, sha)
			return ok && len(vs) >= 3 && vs[0] == 0 && vs[2] >= 0
		}, 1
	case "redisson":
		// Redisson's Lock tries, subscribes and tries again before it
		// sleeps; a refused RLock acquire answers the holder's PTTL.
		sha := redissonTry.Hash()
		p.refused, p.before = func(c redis.Cmder) bool {
			v, err := scriptReply(c, sha)
			_, isInt := v.(int64)
			return err == nil && isInt
		}, 2
	case instrYardstick:
		sha := redissonFencedTry.Hash()
		p.refused, p.before = func(c redis.Cmder) bool {
			vs, ok := scriptInts(c, sha)
			return ok && len(vs) == 2 && vs[1] == -1
		}, 2
	}
	return p
}

// arm starts counting a Lock's refused attempts; the channel is closed
// once as many as precede its sleep were seen.
func (p *waitProbe) arm() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left, p.asleep = p.before, make(chan struct{})
	return p.asleep
}

func (p *waitProbe) saw(c redis.Cmder) {
	if p.refused == nil || !p.refused(c) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.left > 0 {
		if p.left--; p.left == 0 {
			close(p.asleep)
		}
	}
}
