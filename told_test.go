package latchkey_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// A holder learns at once that someone else ended its hold: within about
// a second of a force-unlock by latchkey or the CLI, whatever keeps the
// hold alive, and with a cause that says so; of one by a Redisson client
// (or a DEL) in the hold's first half second, when its alarm is set and
// looks; its own unlock is never taken for one.

// toldWithin is how soon a holder must learn of a force-unlock: the alarm
// is set half a second into a hold, and two round trips follow; the rest
// is for a loaded machine.
const toldWithin = 1500 * time.Millisecond

// held is a hold under test: its end and why.
type held interface {
	Done() <-chan struct{}
	Err() error
}

// redissonForce runs what Redisson's forceUnlock does to a lock hash: delete
// it and publish msg on channel.
func redissonForce(ctx context.Context, c redis.UniversalClient, name, channel, msg string) error {
	return c.Eval(ctx, "redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1",
		[]string{name, channel}, msg).Err()
}

func TestHolder_toldOfForceUnlock(t *testing.T) {
	s := redistest.SharedServer(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	other := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	ctx := context.Background()
	type kind struct {
		name  string
		lock  func(name string) (held, error)
		force func(name string) error // latchkey's
		java  func(name string) error // Redisson's
	}
	mutexForce := func(name string) error { _, err := mutex.New(other, name).ForceUnlock(ctx); return err }
	mutexJava := func(name string) error { return redissonForce(ctx, other, name, keys.LockChannel(name), "0") }
	rwForce := func(name string) error { _, err := rwlock.New(other, name).ForceUnlock(ctx); return err }
	rwJava := func(msg string) func(name string) error {
		return func(name string) error { return redissonForce(ctx, other, name, keys.RWLockOf(name).Channel, msg) }
	}
	kinds := []kind{
		{"mutex watchdog", func(n string) (held, error) { m := mutex.New(c, n); return m, m.Lock(ctx) }, mutexForce, mutexJava},
		{"mutex fixed lease", func(n string) (held, error) {
			m := mutex.New(c, n, mutex.WithLease(time.Minute))
			return m, m.Lock(ctx)
		}, mutexForce, mutexJava},
		{"mutex owner", func(n string) (held, error) { m := mutex.New(c, n); return m, m.Lock(latchkey.WithOwner(ctx)) }, mutexForce, mutexJava},
		{"fairlock", func(n string) (held, error) { m := fairlock.New(c, n); return m, m.Lock(ctx) },
			func(n string) error { _, err := fairlock.New(other, n).ForceUnlock(ctx); return err },
			func(n string) error { return other.Del(ctx, n).Err() }},
		{"rwlock write", func(n string) (held, error) { rw := rwlock.New(c, n); return rw.WriteLock(), rw.Lock(ctx) }, rwForce, rwJava("1")},
		{"rwlock read", func(n string) (held, error) {
			rw := rwlock.New(c, n, rwlock.WithLease(time.Minute))
			return rw.ReadLock(), rw.RLock(ctx)
		}, rwForce, rwJava("0")},
		{"multilock member", func(n string) (held, error) {
			m := multilock.New(mutex.New(c, n, mutex.WithLease(time.Minute)), mutex.New(c, n+"-b", mutex.WithLease(time.Minute)))
			return m, m.Lock(ctx)
		}, mutexForce, mutexJava},
	}
	for _, k := range kinds {
		for _, by := range []string{"latchkey", "redisson"} {
			// Forced before the alarm is set, and after; Redisson's before
			// only: it names nobody on latchkey's channel, and the alarm's
			// first look finds it (after, the next renewal does).
			force, afters := k.force, []time.Duration{100 * time.Millisecond, 800 * time.Millisecond}
			if by == "redisson" {
				force, afters = k.java, afters[:1]
			}
			for _, after := range afters {
				t.Run(fmt.Sprintf("%s/%s/after %v", k.name, by, after), func(t *testing.T) {
					t.Parallel()
					name := uniqueName(t)
					h, err := k.lock(name)
					if err != nil {
						t.Fatal(err)
					}
					time.Sleep(after)
					if err := force(name); err != nil {
						t.Fatal(err)
					}
					forced := time.Now()
					select {
					case <-h.Done():
					case <-time.After(toldWithin):
						t.Fatalf("the holder was not told within %v of the force-unlock", toldWithin)
					}
					if err := h.Err(); !errors.Is(err, latchkey.ErrLost) || !strings.Contains(err.Error(), "force-unlocked") {
						t.Errorf("Err = %v, want ErrLost saying it was force-unlocked", err)
					}
					t.Logf("told %v after the force-unlock", time.Since(forced).Round(time.Millisecond))
				})
			}
		}
	}
}

// A holder's own unlock, its release published on the channel its alarm
// taps, never ends its hold as lost; nor does another owner's release of
// a shared read lock.
func TestHolder_ownUnlockIsNoAlarm(t *testing.T) {
	s := redistest.SharedServer(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	ctx := context.Background()
	type lock interface {
		held
		Lock(context.Context) error
		Unlock(context.Context) error
	}
	var wg sync.WaitGroup
	for i, open := range []func(name string) lock{
		func(n string) lock { return mutex.New(c, n) },
		func(n string) lock { return fairlock.New(c, n) },
		func(n string) lock { return rwlock.New(c, n).WriteLock() },
		func(n string) lock { return rwlock.New(c, n).ReadLock() },
	} {
		for _, owned := range []bool{false, true} {
			wg.Go(func() {
				name := fmt.Sprintf("%s-%d-%v", uniqueName(t), i, owned)
				lctx := ctx
				if owned {
					lctx = latchkey.WithOwner(ctx)
				}
				for round := range 3 {
					l := open(name)
					if err := l.Lock(lctx); err != nil {
						t.Errorf("lock %d round %d: %v", i, round, err)
						return
					}
					time.Sleep(700 * time.Millisecond) // the alarm is set
					if err := l.Unlock(lctx); err != nil {
						t.Errorf("unlock %d round %d: %v", i, round, err)
						return
					}
					<-l.Done()
					if err := l.Err(); err != nil {
						t.Errorf("lock %d (owner %v) round %d: Err after its own Unlock = %v, want nil", i, owned, round, err)
					}
				}
			})
		}
	}
	// Two readers share a read lock: one's release leaves the other held.
	name := uniqueName(t) + "-shared"
	a, b := rwlock.New(c, name), rwlock.New(c, name)
	if err := a.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if err := a.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	select {
	case <-b.ReadLock().Done():
		t.Errorf("a reader's hold ended when another released: %v", b.ReadLock().Err())
	default:
	}
	wg.Wait()
	_ = b.RUnlock(ctx)
}

// A holder's alarm is no Redisson waiter: a release counts the
// subscribers of Redisson's channel to tell whether a Java client waits,
// and must not count the releaser's own alarm as one, lest it queue
// Redisson's place and yield the lock to nobody.
func TestHolder_alarmIsNoRedissonWaiter(t *testing.T) {
	s := redistest.SharedServer(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	other := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	ctx := context.Background()
	name := uniqueName(t)
	m := mutex.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the alarm is set
	got := make(chan error, 1)
	go func() { got <- mutex.New(other, name).Lock(ctx) }()
	queue := keys.LockOf(name).Queue
	for deadline := time.Now().Add(5 * time.Second); c.LLen(ctx, queue).Val() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not queue within 5s")
		}
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if q := c.LRange(ctx, queue, 0, -1).Val(); len(q) != 0 {
		t.Errorf("queue after the handoff = %q, want empty: the release took the holder's alarm for a Redisson waiter", q)
	}
}
