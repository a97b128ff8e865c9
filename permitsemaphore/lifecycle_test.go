package permitsemaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// leftover lists what the server keeps of the semaphore name: its keys,
// but for latchkey's request records, which live their own short lives.
func leftover(t *testing.T, raw *redis.Client, name string) (left []string) {
	all, err := raw.Keys(context.Background(), "*"+name+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if !strings.HasPrefix(k, "latchkey_once:") {
			left = append(left, k)
		}
	}
	return left
}

// Delete fails every latchkey Acquire waiting for a permit with
// ErrDeleted at once, wakes a Redisson waiter, takes the permits held with
// it (their release is refused), and leaves no key on the server.
func TestSemaphore_Delete(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	sem := permitsemaphore.New(client(t, s), name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := sem.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for range cap(errs) {
		other := permitsemaphore.New(client(t, s), name)
		go func() {
			_, err := other.AcquireN(ctx, 1, permitsemaphore.Lease(time.Minute))
			errs <- err
		}()
	}
	waitQueue(t, raw, name, int64(cap(errs)))
	java := make(chan error, 1)
	go func() {
		_, err := (&redissonPermits{c: s.Client(t), name: name}).acquire(ctx)
		java <- err
	}()
	time.Sleep(50 * time.Millisecond) // it tried and subscribed

	if ok, err := sem.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	for range cap(errs) {
		select {
		case err := <-errs:
			if !errors.Is(err, latchkey.ErrDeleted) {
				t.Errorf("Acquire = %v, want an error matching ErrDeleted", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("a waiter was not woken by Delete within 2s")
		}
	}
	if err := held.Release(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Release of a permit of a deleted semaphore = %v, want ErrNotHeld", err)
	}
	if ks := leftover(t, raw, name); len(ks) != 0 {
		t.Errorf("keys left after Delete: %q", ks)
	}
	// Woken, the Redisson waiter found nothing and waits on: a release
	// after the delete serves it.
	if err := sem.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-java:
		if err != nil {
			t.Errorf("the Redisson waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the Redisson waiter was never served")
	}
}

// Expire sets every key to expire, permits held and waiters queued
// included, and they all do; a permit acquired under a TTL lives no longer
// than the count, and SetPermits takes the TTL off both.
func TestSemaphore_Expire(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	sem := permitsemaphore.New(client(t, s), name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sem.Acquire(ctx, permitsemaphore.Forever); err != nil {
		t.Fatal(err)
	}
	waiter, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := permitsemaphore.New(client(t, s), name).Acquire(waiter, permitsemaphore.Forever)
		done <- err
	}()
	waitQueue(t, raw, name, 1)
	before := leftover(t, raw, name)
	if len(before) < 5 {
		t.Fatalf("keys before Expire: %q, want the count, leases, queue, deadlines and listeners", before)
	}
	if ok, err := sem.Expire(ctx, 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	for _, k := range before {
		if d := raw.PTTL(ctx, k).Val(); d <= 0 || d > 300*time.Millisecond {
			t.Errorf("PTTL of %s = %v after Expire(300ms)", k, d)
		}
	}
	stop()
	<-done
	time.Sleep(400 * time.Millisecond)
	if ks := leftover(t, raw, name); len(ks) != 0 {
		t.Errorf("keys left after their TTL: %q", ks)
	}
	if d, err := sem.TTL(ctx); d != 0 || err != nil {
		t.Errorf("TTL of an expired semaphore = %v, %v; want 0", d, err)
	}

	if ok, err := sem.TrySetPermitsTTL(ctx, 2, time.Minute); !ok || err != nil {
		t.Fatalf("TrySetPermitsTTL = %v, %v", ok, err)
	}
	if _, err := sem.Acquire(ctx, permitsemaphore.Forever); err != nil {
		t.Fatal(err)
	}
	leases := "{" + name + "}:timeout"
	if d := raw.PTTL(ctx, leases).Val(); d <= 0 || d > time.Minute {
		t.Errorf("PTTL of the leases = %v, want the count's", d)
	}
	if d, err := sem.TTL(ctx); d <= 0 || d > time.Minute || err != nil {
		t.Errorf("TTL = %v, %v; want up to a minute", d, err)
	}
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if d, err := sem.TTL(ctx); d >= 0 || err != nil {
		t.Errorf("TTL after SetPermits = %v, %v; want none", d, err)
	}
	if d := raw.PTTL(ctx, leases).Val(); d != -1 && d != -time.Millisecond {
		t.Errorf("PTTL of the leases after SetPermits = %v, want none", d)
	}
}

// A semaphore set with a TTL is gone once it passed, the permits held
// with it, and can be set again; a TTL too short is refused. On miniredis,
// whose clock the test moves.
func TestSemaphore_TrySetPermitsTTL(t *testing.T) {
	mr, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if _, err := sem.TrySetPermitsTTL(ctx, 1, time.Millisecond); !errors.Is(err, latchkey.ErrInvalidLease) {
		t.Errorf("TrySetPermitsTTL(1ms) = %v, want ErrInvalidLease", err)
	}
	if _, err := sem.Expire(ctx, 0); !errors.Is(err, latchkey.ErrInvalidLease) {
		t.Errorf("Expire(0) = %v, want ErrInvalidLease", err)
	}
	if ok, err := sem.TrySetPermitsTTL(ctx, 2, time.Second); !ok || err != nil {
		t.Fatalf("TrySetPermitsTTL = %v, %v", ok, err)
	}
	p, err := sem.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	mr.FastForward(time.Second)
	if n, err := sem.Permits(ctx); n != 0 || err != nil {
		t.Errorf("Permits after the TTL = %d, %v; want 0", n, err)
	}
	if err := p.Release(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Release after the TTL = %v, want ErrNotHeld", err)
	}
	if ok, err := sem.TrySetPermitsTTL(ctx, 2, time.Second); !ok || err != nil {
		t.Errorf("TrySetPermitsTTL again = %v, %v; want true", ok, err)
	}
}
