package locktest

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedissonWait waits as a Redisson client's blocking call does (see the
// protocol reference, "How waiting works"): it tries; then it subscribes
// to channel (SSUBSCRIBE if sharded, as Redisson on a Redis 7 cluster),
// and tries again at every message that woken accepts (nil: any), or when
// the wait that the latest try returned runs out (negative: none), until
// a try succeeds or fails, or ctx ends. The tests use it to stand for a
// Java client written from the protocol reference.
func RedissonWait(ctx context.Context, c redis.UniversalClient, channel string, sharded bool,
	woken func(payload string) bool, try func() (bool, time.Duration, error)) error {
	if ok, _, err := try(); ok || err != nil {
		return err
	}
	var sub *redis.PubSub
	if sharded {
		sub = c.SSubscribe(ctx, channel)
	} else {
		sub = c.Subscribe(ctx, channel)
	}
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return err
	}
	msgs := sub.Channel()
	for {
		ok, wait, err := try()
		if ok || err != nil {
			return err
		}
		if wait < 0 {
			wait = time.Hour
		}
		timer := time.NewTimer(wait)
		for woke := false; !woke; {
			select {
			case m := <-msgs:
				woke = woken == nil || woken(m.Payload)
			case <-timer.C:
				woke = true
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			}
		}
		timer.Stop()
	}
}
