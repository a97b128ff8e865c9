package countdownlatch_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/redis/go-redis/v9"
)

func TestNew_panics(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		latch  string
	}{
		{"nil client", nil, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			countdownlatch.New(tc.client, tc.latch)
		})
	}
}

// The layout and messages are Redisson's: a string key holding the count,
// "1" on the channel when a count is set, "0" when it reaches zero.
func TestLatch_redissonLayout(t *testing.T) {
	c, _ := mini(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	if l.Name() != name {
		t.Errorf("Name() = %q, want %q", l.Name(), name)
	}
	msgs := listen(t, c, name, false)

	if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount(2) = %v, %v; want true", ok, err)
	}
	expect(t, msgs, "1")
	if v := c.Get(ctx, name).Val(); v != "2" {
		t.Errorf("GET %s = %q, want \"2\"", name, v)
	}
	if ttl := c.PTTL(ctx, name).Val(); ttl != -1*time.Millisecond && ttl != -1 {
		t.Errorf("PTTL = %v, want no TTL", ttl)
	}

	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, name).Val(); v != "1" {
		t.Errorf("after one CountDown GET = %q, want \"1\"", v)
	}
	quiet(t, msgs)

	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, msgs, "0")
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Error("key still exists at count zero")
	}
}

func TestLatch_TrySetCount(t *testing.T) {
	c, _ := mini(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	msgs := listen(t, c, name, false)

	for _, n := range []int64{0, -1} {
		if ok, err := l.TrySetCount(ctx, n); ok || !errors.Is(err, latchkey.ErrInvalidCount) {
			t.Errorf("TrySetCount(%d) = %v, %v; want ErrInvalidCount", n, ok, err)
		}
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("an invalid TrySetCount created the key")
	}
	if ok, err := l.TrySetCount(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetCount(3) = %v, %v; want true", ok, err)
	}
	expect(t, msgs, "1")
	// An existing latch is left alone, and nobody is told anything.
	if ok, err := countdownlatch.New(c, name).TrySetCount(ctx, 5); ok || err != nil {
		t.Fatalf("TrySetCount on an existing latch = %v, %v; want false", ok, err)
	}
	quiet(t, msgs)
	if n, err := l.Count(ctx); n != 3 || err != nil {
		t.Fatalf("Count = %d, %v; want 3", n, err)
	}
	// Once open (deleted), the latch can be set again.
	for range 3 {
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount after reaching zero = %v, %v; want true", ok, err)
	}
}

// Counting down a latch that does not exist changes nothing: no key is left
// behind (Redisson's DECR would create -1 and delete it) and nothing is
// published.
func TestLatch_CountDown_missing(t *testing.T) {
	c, _ := mini(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	msgs := listen(t, c, name, false)
	for range 3 {
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Errorf("CountDown on a missing latch left key %s = %q", name, c.Get(ctx, name).Val())
	}
	quiet(t, msgs)
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Errorf("Count = %d, %v; want 0", n, err)
	}
	if ok, err := l.TryWait(ctx, 0); !ok || err != nil {
		t.Errorf("TryWait on a missing latch = %v, %v; want true", ok, err)
	}
}

func TestLatch_Delete(t *testing.T) {
	c, _ := mini(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	msgs := listen(t, c, name, false)

	if ok, err := l.Delete(ctx); ok || err != nil {
		t.Fatalf("Delete of a missing latch = %v, %v; want false", ok, err)
	}
	quiet(t, msgs)
	if _, err := l.TrySetCount(ctx, 4); err != nil {
		t.Fatal(err)
	}
	expect(t, msgs, "1")
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	// ZERO_COUNT, not Redisson's NEW_COUNT: Java awaiters are released too.
	expect(t, msgs, "0")
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Errorf("Count after Delete = %d, %v; want 0", n, err)
	}
}

// A value Redisson never writes (zero, negative, set by hand) reads as 0,
// and a CountDown clears it and releases whoever waits.
func TestLatch_foreignValues(t *testing.T) {
	c, _ := mini(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	msgs := listen(t, c, name, false)
	c.Set(ctx, name, -3, 0)
	if n, err := l.Count(ctx); n != 0 || err != nil {
		t.Errorf("Count of -3 = %d, %v; want 0", n, err)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, msgs, "0")
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Error("key still exists")
	}
	c.Set(ctx, name, "not a number", 0)
	if _, err := l.Count(ctx); err == nil {
		t.Error("Count of a non-number: no error")
	}
	if err := l.CountDown(ctx); err == nil {
		t.Error("CountDown of a non-number: no error")
	}
}

// Many clients count down at once: the count read from Redis never goes
// below one while the key exists, exactly one "0" is published however
// many CountDowns arrive late, and no key is left behind.
func TestLatch_CountDown_neverBelowZero(t *testing.T) {
	noLeaks(t)
	raw, newClient := server(t)
	ctx := context.Background()
	name := latchName(t)
	raw.Del(ctx, name)
	const count, clients, perClient = 10, 10, 3 // 30 CountDowns for a count of 10
	if ok, err := countdownlatch.New(raw, name).TrySetCount(ctx, count); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	msgs := listen(t, raw, name, false)

	stop := make(chan struct{})
	var bad atomic.Value
	var polls atomic.Int64
	poller := newClient()
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := poller.Get(ctx, name).Result()
			polls.Add(1)
			if err == redis.Nil {
				continue
			}
			if n, perr := strconv.Atoi(v); err != nil || perr != nil || n < 1 || n > count {
				bad.Store(v + " " + errString(err))
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for range clients {
		l := countdownlatch.New(newClient(), name)
		for range perClient {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- l.CountDown(ctx)
			}()
		}
	}
	wg.Wait()
	close(stop)
	pollWG.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v := bad.Load(); v != nil {
		t.Errorf("the key held %v while counting down", v)
	}
	expect(t, msgs, "0")
	quiet(t, msgs)
	if n := raw.Exists(ctx, name).Val(); n != 0 {
		t.Error("key left behind")
	}
	t.Logf("%d reads of the count during %d CountDowns", polls.Load(), clients*perClient)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
