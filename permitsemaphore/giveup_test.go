package permitsemaphore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// Waiters that give up while grants are on their way (cancellations timed
// at random around releases, on many clients) neither lose permits nor
// hold more than there are.
func TestGrant_givenUp(t *testing.T) {
	s := server(t)
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	name := semName(t)
	raw := s.Client(t)
	const clients, permits, rounds = 6, 2, 120
	if err := permitsemaphore.New(client(t, s), name).SetPermits(ctx, permits); err != nil {
		t.Fatal(err)
	}
	var (
		held, peak   atomic.Int64
		gaveUp, took atomic.Int64
		wg           sync.WaitGroup
		errs         = make(chan error, clients)
	)
	for i := range clients {
		sem := permitsemaphore.New(client(t, s), name)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		wg.Go(func() {
			for range rounds {
				// Most calls give up within 3ms, around the grants; one in
				// four waits long enough to take a permit on a loaded machine.
				wait := time.Duration(rng.IntN(3000)) * time.Microsecond
				if rng.IntN(4) == 0 {
					wait = 2 * time.Second
				}
				actx, cancel := context.WithTimeout(ctx, wait)
				p, err := sem.Acquire(actx, permitsemaphore.Lease(time.Minute))
				cancel()
				switch {
				case err == nil:
					took.Add(1)
					h := held.Add(1)
					for q := peak.Load(); h > q && !peak.CompareAndSwap(q, h); q = peak.Load() {
					}
					time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
					held.Add(-1)
					if err := p.Release(ctx); err != nil {
						errs <- err
						return
					}
				case errors.Is(err, context.DeadlineExceeded):
					gaveUp.Add(1)
				default:
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d acquisitions, %d given up; peak held %d", took.Load(), gaveUp.Load(), peak.Load())
	if p := peak.Load(); p > permits {
		t.Errorf("peak permits held = %d, want at most %d", p, permits)
	}
	if gaveUp.Load() == 0 || took.Load() == 0 {
		t.Error("the test did not race cancellation against grants")
	}
	// Grants of calls that gave up are given back by their dequeue; any
	// left (a give-back cut off) expire after the grace.
	sem := permitsemaphore.New(client(t, s), name)
	for deadline := time.Now().Add(handoff.Grace + 2*time.Second); ; time.Sleep(10 * time.Millisecond) {
		av, ac := must2(sem.AvailablePermits(ctx)), must2(sem.AcquiredPermits(ctx))
		if av == permits && ac == 0 && raw.LLen(ctx, queueKey(name)).Val() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("available %d, acquired %d, %d queued at the end; want %d, 0, 0", av, ac, raw.LLen(ctx, queueKey(name)).Val(), permits)
		}
	}
}

// Redisson clients interoperate with the queue: a Redisson-style acquire
// (reclaim expired permits, take n if the count has them, store their ids
// with their lease end) takes what the queue leaves; a Redisson-style
// release (remove the id, add one, publish the new count) grants nothing
// but wakes the latchkey waiter at the head, which takes the permit; and
// latchkey's release publishes what it left on Redisson's channel.
func TestGrant_redissonClient(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	timeout, channel := "{"+name+"}:timeout", "redisson_sc:{"+name+"}"
	acquire := redis.NewScript(`
local now = tonumber(ARGV[3])
local expired = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, ARGV[1])
for _, id in ipairs(expired) do redis.call('zrem', KEYS[2], id) end
if #expired > 0 then
  local v = redis.call('incrby', KEYS[1], #expired)
  if v > 0 then redis.call('publish', KEYS[3], v) end
end
local v = tonumber(redis.call('get', KEYS[1]) or '0')
if v < tonumber(ARGV[1]) then return nil end
redis.call('decrby', KEYS[1], ARGV[1])
for i = 4, #ARGV do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]) end
return 'OK'`)
	release := redis.NewScript(`
if redis.call('zrem', KEYS[3], ARGV[1]) == 0 then return 0 end
local v = redis.call('incrby', KEYS[1], 1)
redis.call('publish', KEYS[2], v)
return 1`)
	id := string(make([]byte, 16))
	sem := permitsemaphore.New(client(t, s), name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	if err := acquire.Run(ctx, raw, []string{name, timeout, channel}, 1, now+60000, now, id).Err(); err != nil {
		t.Fatalf("Redisson-style acquire: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		p, err := permitsemaphore.New(client(t, s), name).Acquire(ctx, 0)
		if err == nil {
			err = p.Release(ctx) // latchkey's release: Redisson's message "1"
		}
		done <- err
	}()
	waitQueue(t, raw, name, 1)
	mon := raw.Subscribe(ctx, channel)
	defer mon.Close()
	if _, err := mon.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := release.Run(ctx, raw, []string{name, channel, timeout}, id).Int(); v != 1 || err != nil {
		t.Fatalf("Redisson-style release = %v, %v", v, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the latchkey waiter was not woken by a Redisson release")
	}
	for _, want := range []string{"1", "1"} { // Redisson's release, then latchkey's
		msg, err := mon.ReceiveTimeout(ctx, 2*time.Second)
		if m, ok := msg.(*redis.Message); err != nil || !ok || m.Payload != want {
			t.Fatalf("message on Redisson's channel = %v, %v; want %q", msg, err, want)
		}
	}
	// The permit is in the count again: a Redisson client takes it.
	other := strings.Repeat("\x01", 16)
	now = time.Now().UnixMilli()
	if v, err := acquire.Run(ctx, raw, []string{name, timeout, channel}, 1, now+60000, now, other).Text(); v != "OK" || err != nil {
		t.Fatalf("Redisson-style acquire after latchkey's release = %q, %v", v, err)
	}
}
