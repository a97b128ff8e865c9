package countdownlatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// Messages on a latch's channel (Redisson's CountDownLatchPubSub).
const (
	zeroCount = "0" // the count reached zero, or the latch was deleted
	newCount  = "1" // a count was set
)

// notifyTimeout bounds a publish sent by the client after its script (see
// Latch.notify).
const notifyTimeout = 5 * time.Second

// A Latch is a distributed count-down latch named by a Redis key. It must be
// created with New. A Latch is safe for concurrent use by many goroutines,
// and any number of handles, in any number of processes, may use the same
// latch.
type Latch struct {
	client  redis.UniversalClient
	name    string
	channel string
	split   bool // a cluster client whose channel is in another slot than the key
	cfg     config
}

// New returns a Latch for the latch called name on client. It does no I/O.
// Any string is a valid name, the empty one included (see the package
// latchkey doc on names): on a Redis Cluster, a name whose keys would not
// share a hash slot makes every method of the Latch that talks to Redis
// return an error matching latchkey.ErrCrossSlot, without sending anything.
// New panics if client is nil or an option is invalid: these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Latch {
	keys.MustClient("countdownlatch", client)
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	l := &Latch{client: client, name: name, channel: keys.LatchChannel(name), cfg: cfg}
	if _, ok := client.(*redis.ClusterClient); ok {
		l.split = keys.Slot(l.name) != keys.Slot(l.channel)
	}
	return l
}

// Name returns the latch's name, which is also its Redis key.
func (l *Latch) Name() string { return l.name }

// TrySetCount sets the count of the latch to n if the latch does not exist,
// that is if its count is zero, and reports whether it did. A latch that
// exists is left unchanged and TrySetCount returns false. Setting a count
// publishes NEW_COUNT; waiters that wake on it find the count above zero
// and go on waiting. If n is zero or less, TrySetCount returns an error
// matching latchkey.ErrInvalidCount and changes nothing.
func (l *Latch) TrySetCount(ctx context.Context, n int64) (bool, error) {
	if err := rt.Usable(ctx, l.name, l.client); err != nil {
		return false, fmt.Errorf("countdownlatch: set count of %s to %d: %w", l.name, n, err)
	}
	if n <= 0 {
		return false, fmt.Errorf("countdownlatch: set count of %s to %d: %w", l.name, n, lockerr.ErrInvalidCount)
	}
	send := l.cfg.Sender(l.client)
	rep, _ := send.Resend(ctx, scripts.LatchTrySet{Name: l.name, Channel: l.scriptChannel(), Count: n, Record: l.record()}.Request())
	set, err := scripts.Int(rep.Cmd)
	if err != nil {
		return false, fmt.Errorf("countdownlatch: set count of %s: %w", l.name, err)
	}
	if set == 1 {
		l.notify(ctx, send, newCount)
		if err := rep.SyncErr(); err != nil {
			return true, fmt.Errorf("countdownlatch: set count of %s: set on the master: %w", l.name, err)
		}
	}
	return set == 1, nil
}

// CountDown decrements the count of the latch. When the count reaches zero
// the latch is deleted and every waiter is released. CountDown on a latch
// that does not exist does nothing: the count never goes below zero. On
// failure CountDown returns an error wrapping the Redis error. A request
// whose reply was lost and that go-redis sent again counts once.
//
// CountDown returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (l *Latch) CountDown(ctx context.Context) error {
	if err := rt.Usable(ctx, l.name, l.client); err != nil {
		return fmt.Errorf("countdownlatch: count down %s: %w", l.name, err)
	}
	_, err := wait.Cleanup(ctx, l.client, func(ctx context.Context) (struct{}, error) {
		send := l.cfg.Sender(l.client)
		rep, _ := send.Resend(ctx, scripts.LatchCountDown{Name: l.name, Channel: l.scriptChannel(), Record: l.record()}.Request())
		left, err := scripts.Int(rep.Cmd)
		if err != nil {
			return struct{}{}, err
		}
		if left == 0 {
			l.notify(ctx, send, zeroCount)
		}
		if err := rep.SyncErr(); err != nil && left >= 0 {
			return struct{}{}, fmt.Errorf("counted on the master: %w", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		return fmt.Errorf("countdownlatch: count down %s: %w", l.name, err)
	}
	return nil
}

// Count returns the current count of the latch: 0 if it does not exist.
func (l *Latch) Count(ctx context.Context) (int64, error) {
	if err := rt.Usable(ctx, l.name, l.client); err != nil {
		return 0, fmt.Errorf("countdownlatch: count of %s: %w", l.name, err)
	}
	n, err := l.count(ctx)
	if err != nil {
		return 0, fmt.Errorf("countdownlatch: count of %s: %w", l.name, err)
	}
	return n, nil
}

func (l *Latch) count(ctx context.Context) (int64, error) {
	get, ok := flight.Bounded(ctx, l.client, func(ctx context.Context) *redis.StringCmd { return l.client.Get(ctx, l.name) })
	if !ok {
		return 0, ctx.Err()
	}
	n, err := get.Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return max(n, 0), nil
}

// Delete deletes the latch, whatever its count, and reports whether it
// existed. Deleting a latch releases its waiters, since a latch that does
// not exist has count zero: Delete publishes ZERO_COUNT where Redisson
// publishes NEW_COUNT (which leaves Redisson's awaiters blocked).
func (l *Latch) Delete(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, l.name, l.client); err != nil {
		return false, fmt.Errorf("countdownlatch: delete %s: %w", l.name, err)
	}
	var (
		n    int64
		err  error
		send = l.cfg.Sender(l.client)
	)
	if l.split {
		n, err = flight.Query(ctx, l.client, func(ctx context.Context) (int64, error) { return l.client.Del(ctx, l.name).Result() })
	} else {
		n, err = scripts.Int(send.Send(ctx, scripts.LockForceRelease{Name: l.name, Channel: l.channel, Message: zeroCount}.Request()).Cmd)
	}
	if err != nil {
		return false, fmt.Errorf("countdownlatch: delete %s: %w", l.name, err)
	}
	if n == 1 {
		l.notify(ctx, send, zeroCount)
	}
	return n == 1, nil
}

// scriptChannel is the channel a script publishes on: "" when it is in
// another cluster slot than the key, where the script may not touch it
// and notify publishes instead.
func (l *Latch) scriptChannel() string {
	if l.split {
		return ""
	}
	return l.channel
}

// notify publishes msg from the client after a script that changed the
// latch, for a latch whose channel is in another cluster slot than its key;
// otherwise the script has already published. The change is made, so the
// message goes out even if ctx has ended, and a failure is not reported:
// the waiters' bounded sleep covers a lost message.
func (l *Latch) notify(ctx context.Context, send rt.Sender, msg string) {
	if !l.split {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	if pub, err := send.Publish(ctx); err == nil {
		_ = l.client.Do(ctx, pub, l.channel, msg).Err() // routed by the channel, as SPublish is
	}
}

// record returns the key of the record of a new request that changes the
// latch, its own: sent again through transient faults (Resend), it counts
// once.
func (l *Latch) record() string { return keys.NewOnce(l.name) }
