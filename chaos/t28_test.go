package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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

// nameSeeds are the seed corpus of FuzzLockNames: hash tags balanced,
// unbalanced, empty and nested, glob and key separators, unicode, NUL, and
// a long name.
var nameSeeds = []string{
	"plain", "{}x", "a{b", "a}b", "x{}", "}{", "{}", "{", "}", "{{}}", "{a}b", "a{b}c{d}", "{a{b}c}",
	":", "a:b:{c}", "*", "?[a-z]", "ünïcødé ✓", "a\x00b", "a b\tc\n", strings.Repeat("x{", 512),
}

// fuzzSeq makes every fuzzed name unique, so that inputs never meet keys
// left by earlier inputs.
var fuzzSeq atomic.Int64

// rejected counts the names that a call refused, as it may on a cluster,
// with an error matching latchkey.ErrCrossSlot.
var rejected atomic.Int64

// FuzzLockNames (T28) takes every primitive, on a 3-master Redis Cluster,
// under a fuzzed name: each must work or refuse the name at its first call
// with an error matching latchkey.ErrCrossSlot, before sending anything;
// it must never panic (a name is data), nor fail with the server's
// CROSSSLOT (keys of one primitive in several slots) or WRONGTYPE (keys
// shared with another primitive). The seed corpus runs as a normal test;
// go test -fuzz FuzzLockNames explores further.
func FuzzLockNames(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	c := redistest.StartCluster(f, 3)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: 2 * time.Second})
	closeLater(f, cc)
	f.Cleanup(func() {
		f.Logf("%d of %d names refused with ErrCrossSlot", rejected.Load(), fuzzSeq.Load()*int64(len(namePrimitives)))
	})
	f.Fuzz(func(t *testing.T, raw string) {
		n := fuzzSeq.Add(1)
		for _, p := range namePrimitives {
			name := fmt.Sprintf("fz%d%s:%s", n, p.name, raw)
			if problem := tryName(t.Context(), cc, p, name); problem != "" {
				totals.violations.Add(1)
				t.Errorf("%s on %s: %s", p.name, short(name), problem)
			}
		}
	})
}

// A namePrimitive exercises one primitive under a name.
type namePrimitive struct {
	name string
	use  func(ctx context.Context, c redis.UniversalClient, name string) error
}

// tryName runs p under name and describes what went wrong, if anything.
func tryName(ctx context.Context, c redis.UniversalClient, p namePrimitive, name string) (problem string) {
	defer func() {
		if v := recover(); v != nil {
			problem = fmt.Sprintf("panic: %v", v)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := p.use(ctx, c, name)
	if err == nil {
		totals.acquisitions.Add(1)
		return ""
	}
	switch msg := err.Error(); {
	case errors.Is(err, latchkey.ErrCrossSlot) && !strings.Contains(msg, "CROSSSLOT"):
		rejected.Add(1)
		return ""
	case strings.Contains(msg, "CROSSSLOT"):
		return "keys in different slots: " + short(msg)
	case strings.Contains(msg, "WRONGTYPE"):
		return "keys shared with another primitive: " + short(msg)
	default:
		return "failed: " + short(msg)
	}
}

var namePrimitives = []namePrimitive{
	{"mutex", func(ctx context.Context, c redis.UniversalClient, name string) error {
		m := mutex.New(c, name)
		return tryUnlock(ctx, m.TryLock, m.Unlock)
	}},
	{"fairlock", func(ctx context.Context, c redis.UniversalClient, name string) error {
		m := fairlock.New(c, name)
		return tryUnlock(ctx, m.TryLock, m.Unlock)
	}},
	{"rwlock", func(ctx context.Context, c redis.UniversalClient, name string) error {
		rw := rwlock.New(c, name)
		if err := tryUnlock(ctx, rw.TryRLock, rw.RUnlock); err != nil {
			return err
		}
		return tryUnlock(ctx, rw.TryLock, rw.Unlock)
	}},
	{"semaphore", func(ctx context.Context, c redis.UniversalClient, name string) error {
		s := semaphore.New(c, name)
		if _, err := s.TrySetPermits(ctx, 2); err != nil {
			return err
		}
		if err := s.Acquire(ctx, 1); err != nil {
			return err
		}
		return s.Release(ctx, 1)
	}},
	{"permitsemaphore", func(ctx context.Context, c redis.UniversalClient, name string) error {
		s := permitsemaphore.New(c, name)
		if _, err := s.TrySetPermits(ctx, 2); err != nil {
			return err
		}
		p, err := s.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		if err != nil {
			return err
		}
		return p.Release(ctx)
	}},
	{"countdownlatch", func(ctx context.Context, c redis.UniversalClient, name string) error {
		l := countdownlatch.New(c, name)
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			return err
		}
		if err := l.CountDown(ctx); err != nil {
			return err
		}
		return l.Wait(ctx)
	}},
}

// tryUnlock takes a free lock at once and releases it.
func tryUnlock(ctx context.Context, try func(context.Context, time.Duration) (bool, error), unlock func(context.Context) error) error {
	ok, err := try(ctx, 0)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("a fresh lock was not free")
	}
	return unlock(ctx)
}

// short quotes s, cut to 80 bytes.
func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}
