package semaphore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

func TestSemaphore_Acquire_waitsForRelease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem, h := watched(t, s, name)
	if err := sem.SetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sem.Acquire(ctx, 3) }()
	waitWaiters(t, h, 1)
	select {
	case err := <-done:
		t.Fatalf("Acquire(3) of 2 returned %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	other := semaphore.New(client(t, s), name) // another process releases
	woken(t, done, "Acquire(3)", func() error { return other.Release(ctx, 1) })
	if n, _ := sem.AvailablePermits(ctx); n != 0 {
		t.Errorf("AvailablePermits = %d, want 0", n)
	}
}

// Waiters are served in order, as in golang.org/x/sync/semaphore: a
// release of 1 permit does not let a waiter for 1 overtake an older waiter
// for 3; once 3 are available the older one gets them, and the next
// release the younger. Waiters of one process share a connection.
func TestSemaphore_servesInOrder(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem, h := watched(t, s, name)
	big, small := make(chan error, 1), make(chan error, 1)
	raw := s.Client(t)
	go func() { big <- sem.Acquire(ctx, 3) }()
	waitQueue(t, raw, name, 1) // queued, not only listening: the order is the queue's
	go func() { small <- sem.Acquire(ctx, 1) }()
	waitQueue(t, raw, name, 2)
	waitWaiters(t, h, 2)
	if st := h.Stats(); st.Connections != 1 {
		t.Errorf("hub stats %+v, want one connection", st)
	}

	other := semaphore.New(client(t, s), name)
	if err := other.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-small:
		t.Fatalf("the waiter for 1 overtook the older waiter for 3: %v", err)
	case err := <-big:
		t.Fatalf("the waiter for 3 returned %v after a release of 1", err)
	case <-time.After(100 * time.Millisecond):
	}
	woken(t, big, "the waiter for 3", func() error { return other.Release(ctx, 2) })
	select {
	case err := <-small:
		t.Fatalf("the waiter for 1 returned %v with no permit left", err)
	case <-time.After(50 * time.Millisecond):
	}
	woken(t, small, "the waiter for 1", func() error { return other.Release(ctx, 1) })
	if n, _ := sem.AvailablePermits(ctx); n != 0 {
		t.Errorf("AvailablePermits = %d, want 0", n)
	}
}

// woken runs release and checks that it ends the call whose result done
// carries, by its message: well before the wait loop's backstop.
func woken(t *testing.T, done <-chan error, what string, release func() error) {
	t.Helper()
	start := time.Now()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s woken %v after the release", what, time.Since(start))
	case <-time.After(wait.Backstop / 2):
		t.Fatalf("%s not woken by the release", what)
	}
}

// A waiting Acquire that is cancelled, or whose TryAcquire budget runs
// out, leaves the permits as they were.
func TestSemaphore_Acquire_cancelConsumesNothing(t *testing.T) {
	s := server(t)
	name := semName(t)
	sem, h := watched(t, s, name)
	if err := sem.SetPermits(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sem.Acquire(ctx, 3) }()
	waitWaiters(t, h, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, want context.Canceled", err)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	if err := sem.Acquire(dctx, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if ok, err := sem.TryAcquire(context.Background(), 3, 100*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquire(3 of 2) = %v, %v; want false, nil", ok, err)
	}
	if n, err := sem.AvailablePermits(context.Background()); n != 2 || err != nil {
		t.Fatalf("AvailablePermits = %d, %v; want 2", n, err)
	}
	if st := h.Stats(); st.Waiters != 0 {
		t.Errorf("hub still has %d waiters", st.Waiters)
	}
}

// cancelHook cancels a context just before the acquire script is sent:
// the script is granted while the caller has already given up.
type cancelHook struct {
	cancel atomic.Pointer[context.CancelFunc]
}

func (h *cancelHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *cancelHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *cancelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			if c := h.cancel.Swap(nil); c != nil {
				(*c)()
				time.Sleep(20 * time.Millisecond) // the caller notices first
			}
		}
		return next(ctx, cmd)
	}
}

// Permits granted by an attempt that was in flight when ctx ended are
// given back: the caller sees ctx's error and the count is unchanged.
func TestSemaphore_Acquire_grantAfterCancel(t *testing.T) {
	s := server(t)
	c := client(t, s)
	hook := &cancelHook{}
	c.AddHook(hook)
	sem := semaphore.New(c, semName(t))
	if err := sem.SetPermits(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		hook.cancel.Store(&cancel)
		if err := sem.Acquire(ctx, 2); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire cancelled in flight = %v, want context.Canceled", err)
		}
		if n, err := sem.AvailablePermits(context.Background()); n != 2 || err != nil {
			t.Fatalf("AvailablePermits = %d, %v; want the 2 given back", n, err)
		}
	}
}

// A release whose message is lost (here: permits added behind the
// semaphore's back, without a publish) still lets a waiter in, within the
// wait loop's backstop; Redisson's acquire would wait forever.
func TestSemaphore_Acquire_lostMessage(t *testing.T) {
	t.Parallel()
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem, h := watched(t, s, name)
	done := make(chan error, 1)
	go func() { done <- sem.Acquire(ctx, 1) }()
	waitWaiters(t, h, 1)
	time.Sleep(50 * time.Millisecond) // let the waiter go to sleep
	start := time.Now()
	if err := s.Client(t).IncrBy(ctx, name, 1).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("waiter found the unannounced permit after %v (backstop %v)", time.Since(start), wait.Backstop)
	case <-time.After(wait.Backstop + 3*time.Second):
		t.Fatal("waiter never found the unannounced permit")
	}
}
