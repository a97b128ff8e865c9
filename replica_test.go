package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// syncCase is one primitive's acquisition under replica sync: acquire
// takes it with the given WithReplicaSync timeout (a negative one: the
// default), check reports what the given client (of the master or the
// replica) sees of it, and release gives it back.
type syncCase struct {
	name    string
	acquire func(ctx context.Context, c redis.UniversalClient, name string, sync time.Duration) (release func() error, err error)
	held    func(ctx context.Context, c redis.UniversalClient, name string) bool
}

var syncCases = []syncCase{
	{"mutex", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		m := mutex.New(c, name, syncOpt(mutex.WithReplicaSync, d)...)
		err := m.Lock(ctx)
		return func() error { return m.Unlock(ctx) }, err
	}, hashHeld},
	{"fairlock", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		m := fairlock.New(c, name, syncOpt(fairlock.WithReplicaSync, d)...)
		err := m.Lock(ctx)
		return func() error { return m.Unlock(ctx) }, err
	}, hashHeld},
	{"rwlock-write", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		rw := rwlock.New(c, name, syncOpt(rwlock.WithReplicaSync, d)...)
		err := rw.Lock(ctx)
		return func() error { return rw.Unlock(ctx) }, err
	}, hashHeld},
	{"rwlock-read", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		rw := rwlock.New(c, name, syncOpt(rwlock.WithReplicaSync, d)...)
		err := rw.RLock(ctx)
		return func() error { return rw.RUnlock(ctx) }, err
	}, hashHeld},
	{"semaphore", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		s := semaphore.New(c, name, syncOpt(semaphore.WithReplicaSync, d)...)
		if _, err := s.TrySetPermits(ctx, 1); err != nil && !errors.Is(err, latchkey.ErrNotReplicated) {
			return nil, err
		}
		err := s.Acquire(ctx, 1)
		return func() error { return s.Release(ctx, 1) }, err
	}, func(ctx context.Context, c redis.UniversalClient, name string) bool {
		return c.Get(ctx, name).Val() == "0"
	}},
	{"permitsemaphore", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		s := permitsemaphore.New(c, name, syncOpt(permitsemaphore.WithReplicaSync, d)...)
		if _, err := s.TrySetPermits(ctx, 1); err != nil && !errors.Is(err, latchkey.ErrNotReplicated) {
			return nil, err
		}
		p, err := s.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		return func() error { return p.Release(ctx) }, err
	}, func(ctx context.Context, c redis.UniversalClient, name string) bool {
		return c.ZCard(ctx, "{"+name+"}:timeout").Val() == 1
	}},
	{"countdownlatch", func(ctx context.Context, c redis.UniversalClient, name string, d time.Duration) (func() error, error) {
		l := countdownlatch.New(c, name, syncOpt(countdownlatch.WithReplicaSync, d)...)
		_, err := l.TrySetCount(ctx, 2)
		return func() error { return l.CountDown(ctx) }, err
	}, func(ctx context.Context, c redis.UniversalClient, name string) bool {
		return c.Get(ctx, name).Val() == "2"
	}},
}

func syncOpt[O any](with func(time.Duration) O, d time.Duration) []O {
	if d < 0 {
		return nil
	}
	return []O{with(d)}
}

func hashHeld(ctx context.Context, c redis.UniversalClient, name string) bool {
	return c.Exists(ctx, name).Val() == 1
}

// On a master with a replica, each primitive's acquisition is on the
// replica when it returns. With the replica frozen, an acquisition under
// the default replica sync fails with ErrNotReplicated soon after the sync
// timeout and leaves nothing behind (a count-down latch, whose writes are
// not acquisitions, is set on the master and says so); with replica sync
// off it succeeds at once.
func TestReplicaSync(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := closeLater(t, master.Client(t))
	rc := replica.Client(t)
	ctx := context.Background()
	const timeout = 300 * time.Millisecond

	for _, sc := range syncCases {
		t.Run(sc.name, func(t *testing.T) {
			name := uniqueName(t)
			release, err := sc.acquire(ctx, c, name, -1)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.held(ctx, rc, name) {
				t.Fatal("the replica does not have it when the acquisition returns")
			}
			if err := release(); err != nil {
				t.Fatal(err)
			}

			replica.Freeze()
			defer replica.Thaw()
			frozen := uniqueName(t)
			start := time.Now()
			_, err = sc.acquire(ctx, c, frozen, timeout)
			took := time.Since(start)
			if !errors.Is(err, latchkey.ErrNotReplicated) {
				t.Fatalf("acquisition with the replica frozen = %v, want ErrNotReplicated", err)
			}
			if took > 2*timeout+time.Second { // semaphores set their permits first, waiting once more
				t.Fatalf("failed %v after it started, more than a second past two %v sync timeouts", took, timeout)
			}
			if sc.name == "countdownlatch" {
				if !sc.held(ctx, c, frozen) {
					t.Fatal("a count set but not replicated is not on the master")
				}
			} else if sc.held(ctx, c, frozen) {
				t.Fatal("an acquisition that was not replicated left its hold behind")
			}

			off := uniqueName(t)
			start = time.Now()
			release, err = sc.acquire(ctx, c, off, 0)
			if err != nil {
				t.Fatalf("acquisition with replica sync off = %v", err)
			}
			if took := time.Since(start); took > timeout {
				t.Fatalf("acquisition with replica sync off took %v: it waited for the frozen replica", took)
			}
			if err := release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
