package lease_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// slack is how late a timed event may be on a loaded 2-core machine under
// -race; it only catches what never happens or happens far too late.
const slack = time.Second

// lost records the calls of a hold's Lost.
type lost struct {
	mu   sync.Mutex
	errs []error
	at   time.Time
	once sync.Once
	c    chan struct{} // closed at the first call
}

func newLost() *lost { return &lost{c: make(chan struct{})} }

func (l *lost) call(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.at = time.Now()
	l.mu.Unlock()
	l.once.Do(func() { close(l.c) })
}

// last returns when the latest call happened.
func (l *lost) last() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at
}

func (l *lost) calls() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// wait waits up to d for the first call and returns when it happened.
func (l *lost) wait(t *testing.T, d time.Duration) time.Time {
	t.Helper()
	select {
	case <-l.c:
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.at
	case <-time.After(d):
		t.Fatalf("Lost not called within %v", d)
		return time.Time{}
	}
}

// lock creates a Redisson hash lock held by owner with a TTL of d, as the
// acquire script leaves it, and returns the hold that renews it.
func lock(t *testing.T, c redis.UniversalClient, key string, d time.Duration) (*lease.Hold, *lost) {
	t.Helper()
	owner := "6a3f1c52-0000-4000-8000-000000000000:1"
	ctx := context.Background()
	// A fresh key: a run before this one (-count) may have left it of
	// another type (see TestScheduler_wrongTypeIsLossOfThatHoldOnly).
	if err := c.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.HSet(ctx, key, owner, 1).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PExpire(ctx, key, d).Err(); err != nil {
		t.Fatal(err)
	}
	l := newLost()
	return &lease.Hold{Kind: lease.HashLock, Keys: []string{key}, Owner: owner, Args: func(o string) []any { return []any{o} }, Lease: d, Lost: l.call}, l
}

// restart sets the lease of every key to d again, and returns the time
// before it did: locking many keys may take longer than a renewal period on
// a loaded machine, so a test that wants them renewed in one round restarts
// their leases together and adds their holds with that time.
func restart(t *testing.T, c redis.UniversalClient, keys []string, d time.Duration) time.Time {
	t.Helper()
	at := time.Now()
	ctx := context.Background()
	for _, k := range keys {
		if err := c.PExpire(ctx, k, d).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return at
}

// keyName returns a key unique to t; without a hash tag, keys of one test
// fall in many cluster slots.
func keyName(t *testing.T, i int) string {
	return fmt.Sprintf("lease-test:%s:%d", t.Name(), i)
}

// client returns a new client of s (so a new scheduler), with the scripts
// loaded, whose scheduler is closed when t ends.
func client(t *testing.T, s *redistest.Server, opts ...func(*redis.Options)) *redis.Client {
	c := s.Client(t, opts...)
	if err := scripts.Preload(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSched(c) })
	return c
}

// scheds is the tests' scheduler per client, as package shared keeps one.
var scheds sync.Map // redis.UniversalClient -> *lease.Scheduler

func schedFor(c redis.UniversalClient) *lease.Scheduler {
	s, _ := scheds.LoadOrStore(c, lease.New(c, rt.Renewals(c)))
	return s.(*lease.Scheduler)
}

// closeSched closes the scheduler of c, if any.
func closeSched(c redis.UniversalClient) {
	if s, ok := scheds.LoadAndDelete(c); ok {
		s.(*lease.Scheduler).Close()
	}
}

// scriptCalls counts the renewal scripts a client runs and the keys each
// carried, and can make them fail.
type scriptCalls struct {
	mu    sync.Mutex
	keys  []int // KEYS count of each EVALSHA/EVAL, in order
	errs  []string
	fail  atomic.Pointer[error]
	calls atomic.Int32
}

func (s *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (s *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := strings.ToLower(cmd.Name())
		if name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		s.calls.Add(1)
		n, _ := cmd.Args()[2].(int)
		s.mu.Lock()
		s.keys = append(s.keys, n)
		s.mu.Unlock()
		if err := s.fail.Load(); err != nil {
			cmd.SetErr(*err)
			return *err
		}
		err := next(ctx, cmd)
		if err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err.Error())
			s.mu.Unlock()
		}
		return err
	}
}

func (s *scriptCalls) snapshot() (keys []int, errs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.keys...), append([]string(nil), s.errs...)
}

// failWith makes every script call fail with err (nil: succeed again).
func (s *scriptCalls) failWith(err error) {
	if err == nil {
		s.fail.Store(nil)
	} else {
		s.fail.Store(&err)
	}
}
