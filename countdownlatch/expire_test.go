package countdownlatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/redistest"
)

// Expire and TTL on the latch's key, on miniredis, whose clock the test
// moves: an expired latch has count zero. A TTL too short is refused
// without I/O.
func TestLatch_Expire(t *testing.T) {
	mr, c := redistest.Miniredis(t)
	release(t, c)
	ctx := context.Background()
	l := countdownlatch.New(c, latchName(t))
	for _, d := range []time.Duration{0, -time.Second, time.Millisecond} {
		if ok, err := l.Expire(ctx, d); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("Expire(%v) = %v, %v; want ErrInvalidLease", d, ok, err)
		}
	}
	if ok, err := l.Expire(ctx, time.Second); ok || err != nil {
		t.Errorf("Expire of a missing latch = %v, %v; want false", ok, err)
	}
	if d, err := l.TTL(ctx); d != 0 || err != nil {
		t.Errorf("TTL of a missing latch = %v, %v; want 0", d, err)
	}
	if _, err := l.TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if d, err := l.TTL(ctx); d >= 0 || err != nil {
		t.Errorf("TTL without one = %v, %v; want negative", d, err)
	}
	if ok, err := l.Expire(ctx, 2*time.Second); !ok || err != nil {
		t.Fatalf("Expire = %v, %v; want true", ok, err)
	}
	if err := l.CountDown(ctx); err != nil { // DECR keeps the TTL
		t.Fatal(err)
	}
	if d, err := l.TTL(ctx); d != 2*time.Second || err != nil {
		t.Errorf("TTL = %v, %v; want 2s", d, err)
	}
	mr.FastForward(2 * time.Second)
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Errorf("Count after the TTL = %d, %v; want 0", n, err)
	}
}

// On a real server the key expires by the wall clock, and a waiter blocked
// on the latch is released with its next look, without a message.
func TestLatch_Expire_releasesWaiters(t *testing.T) {
	c, _ := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx) }()
	if ok, err := l.Expire(ctx, 100*time.Millisecond); !ok || err != nil {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	waitFor(t, "the key to expire", func() bool { return c.Exists(ctx, name).Val() == 0 })
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiter was not released after the latch expired")
	}
}
