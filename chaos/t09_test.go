package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// t09Lease is the lease (watchdog timeout) of the holds of T09: an orphan
// hold must be gone within it.
const t09Lease = time.Second

// An orphanCase is one primitive of T09: acquire through c, and tell,
// through the clean client other, whether what the acquisition may have
// left is gone.
type orphanCase struct {
	name    string
	setup   func(ctx context.Context, other *redis.Client, name string) error
	acquire func(ctx context.Context, c *redis.Client, name string) error
	// clean reports, as nil, that nothing is left: another client can
	// take the whole primitive at once.
	clean func(ctx context.Context, other *redis.Client, name string) error
}

var orphanCases = []orphanCase{
	{name: "mutex",
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return mutex.New(c, name, mutex.WithWatchdogTimeout(t09Lease)).Lock(ctx)
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			l := mutex.New(o, name)
			return tryRelease(ctx, l.TryLock, l.Unlock)
		}},
	{name: "fairlock",
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return fairlock.New(c, name, fairlock.WithWatchdogTimeout(t09Lease)).Lock(ctx)
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			l := fairlock.New(o, name)
			return tryRelease(ctx, l.TryLock, l.Unlock)
		}},
	{name: "rwlock-write",
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return rwlock.New(c, name, rwlock.WithWatchdogTimeout(t09Lease)).Lock(ctx)
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			l := rwlock.New(o, name)
			return tryRelease(ctx, l.TryLock, l.Unlock)
		}},
	{name: "rwlock-read",
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return rwlock.New(c, name, rwlock.WithWatchdogTimeout(t09Lease)).RLock(ctx)
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			l := rwlock.New(o, name)
			return tryRelease(ctx, l.TryLock, l.Unlock)
		}},
	{name: "semaphore",
		setup: func(ctx context.Context, o *redis.Client, name string) error {
			_, err := semaphore.New(o, name).TrySetPermits(ctx, 2)
			return err
		},
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return semaphore.New(c, name).Acquire(ctx, 2)
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			return wantCount(ctx, semaphore.New(o, name).AvailablePermits, 2)
		}},
	{name: "permitsemaphore",
		setup: func(ctx context.Context, o *redis.Client, name string) error {
			_, err := permitsemaphore.New(o, name).TrySetPermits(ctx, 2)
			return err
		},
		acquire: func(ctx context.Context, c *redis.Client, name string) error {
			_, err := permitsemaphore.New(c, name).AcquireN(ctx, 2, permitsemaphore.Lease(t09Lease))
			return err
		},
		clean: func(ctx context.Context, o *redis.Client, name string) error {
			return wantCount(ctx, permitsemaphore.New(o, name).AvailablePermits, 2)
		}},
}

// TestT09AmbiguousAcquireNoOrphan: an acquisition whose reply is lost
// (replies blackholed, the caller's ctx ends first) returns an error, and
// then whatever it may have taken on the server is released or expires
// within the 1s lease plus a second: no hold, permit or queue entry is
// left behind beyond the lease. Each primitive runs 3 trials.
func TestT09AmbiguousAcquireNoOrphan(t *testing.T) {
	e := newStandalone(t, 1)
	other := newClient(t, e.Server.Addr())
	for _, tc := range orphanCases {
		t.Run(tc.name, func(t *testing.T) {
			r := newReport(t)
			for i := range lostReplyTrials {
				problem := notStaged
				for try := 0; try < stagingTries && problem == notStaged; try++ {
					problem = orphanTrial(t.Context(), e, other, tc, fmt.Sprintf("%s:%d", name(t, i), try))
				}
				if problem != "" {
					r.Violation("%s (trial %d): %s", t.Name(), i, problem)
				}
				r.Fault()
			}
		})
	}
}

// notStaged is orphanTrial's answer when its fault could not be staged:
// the acquisition never reached the server before its 200ms ran out (a
// loaded machine under -race), so that there is nothing to check. Such a
// trial runs again on a fresh name, up to stagingTries times, before it
// counts.
const (
	notStaged    = "setup: the acquisition never reached the server"
	stagingTries = 3
)

// orphanTrial runs one trial of T09 and returns what went wrong, if anything.
func orphanTrial(ctx context.Context, e *Standalone, other *redis.Client, tc orphanCase, name string) string {
	if tc.setup != nil {
		if err := tc.setup(ctx, other, name); err != nil {
			return "setup: " + err.Error()
		}
	}
	// A first acquisition and release on another name sets up the
	// client's connections, so that the blackholed one reaches the server.
	if problem := warmUp(ctx, e, other, tc, name+":warm"); problem != "" {
		return problem
	}
	before := scriptCalls(ctx, e.Admin)
	heal := e.Proxies[0].Blackhole("downstream")
	actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := tc.acquire(actx, e.Clients[0], name)
	cancel()
	heal()
	if err == nil {
		return "acquired although every reply was lost"
	}
	if scriptCalls(ctx, e.Admin) == before {
		return notStaged
	}
	start := time.Now()
	bound := t09Lease + time.Second
	var last error
	for time.Since(start) < bound {
		if last = tc.clean(ctx, other, name); last == nil {
			return ""
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("the acquisition failed (%v), and %v later what it took is still there: %v", err, bound, last)
}

// tryRelease takes a lock at once and releases it.
func tryRelease(ctx context.Context, try func(context.Context, time.Duration) (bool, error), unlock func(context.Context) error) error {
	ok, err := try(ctx, 0)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("the lock is still held")
	}
	return unlock(ctx)
}

// wantCount reports whether count returns want.
func wantCount(ctx context.Context, count func(context.Context) (int64, error), want int64) error {
	n, err := count(ctx)
	switch {
	case err != nil:
		return err
	case n != want:
		return fmt.Errorf("%d permits available, want %d", n, want)
	}
	return nil
}

// warmUp acquires name through the faulted client and lets clean release it.
func warmUp(ctx context.Context, e *Standalone, other *redis.Client, tc orphanCase, name string) string {
	if tc.setup != nil {
		if err := tc.setup(ctx, other, name); err != nil {
			return "setup: " + err.Error()
		}
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := tc.acquire(actx, e.Clients[0], name); err != nil {
		return "warm-up: " + err.Error()
	}
	_, _ = e.Clients[0].Ping(ctx).Result()
	return ""
}

// scriptCalls returns how many scripts the server has run.
func scriptCalls(ctx context.Context, admin *redis.Client) int64 {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return -1
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:", "cmdstat_eval:"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				var n int64
				fmt.Sscanf(rest, "calls=%d", &n)
				total += n
			}
		}
	}
	return total
}
