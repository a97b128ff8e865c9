package mutex

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

var opsScript = scripts.Get("mutex_ops")

// The operations of mutex_ops.lua.
const (
	opAcquire = "acquire" // try, and join the waiter queue if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
)

// queueTimeout is how long a waiter's queue entry lives unless it attempts
// again. Waiters attempt at least every wait.Backstop, refreshing it.
const queueTimeout = 3 * wait.Backstop

// grace is how long a release keeps the free lock for the waiter it tells:
// long enough for a live waiter to answer, short enough that a dead one
// costs little.
const grace = 100 * time.Millisecond

// protocol is the mutex's side of lockcore.Protocol: mutex_ops.lua on a
// Redisson RLock hash, and the waiter queue beside it.
type protocol struct {
	client  redis.UniversalClient
	cfg     *config
	channel string   // Redisson's shared unlock channel
	hubs    string   // prefix of each Hub's channel, told when its waiter is first in line
	keys    []string // mutex_ops's KEYS
}

func newProtocol(client redis.UniversalClient, name string, cfg *config) *protocol {
	channel := keys.LockChannel(name)
	hubs := keys.Prefix("latchkey_lock__channel", name)
	return &protocol{
		client:  client,
		cfg:     cfg,
		channel: channel,
		hubs:    hubs,
		keys: []string{
			name,
			keys.TokenKey(name),
			keys.Prefix("latchkey_lock_queue", name),
			keys.Prefix("latchkey_lock_timeout", name),
			channel,
			hubs,
			keys.Prefix("latchkey_lock_grant", name),
		},
	}
}

func (p *protocol) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	op := opAcquire
	if w.Try {
		op = opTry
	}
	rep := p.exec(ctx, op, w.ID, w.Hub.ID(), w.Reentrant, w.Started, w.Pub, w.Req)
	vs, err := scripts.Ints(rep.Cmd)
	switch {
	case err != nil:
		return lockcore.Attempt{}, err
	case len(vs) != 3:
		return lockcore.Attempt{}, fmt.Errorf("latchkey: script reply: want 3 integers, got %d", len(vs))
	case vs[0] == 1:
		return lockcore.Attempt{OK: true, Token: vs[1], Reply: rep}, nil
	}
	w.Rank = vs[2]
	return lockcore.Attempt{Retry: scripts.Millis(vs[1]), Reply: rep}, nil
}

// Listen makes w sleep on its Hub's own channel, which a release tells
// when w's waiter heads the queue, and count releases on Redisson's shared
// channel, where every release, by latchkey or by Redisson, publishes. A
// waiter with rank waiters ahead of it tries again after rank+1 releases:
// by then each of those has had its turn, so each release sets off one
// attempt, not one per client. The waiter next after the one told tries
// once the grace is over, in case that one died and will never take its
// turn.
func (p *protocol) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Channel = p.hubs + ":" + w.Hub.ID()
	s.Policy = notify.WakeOne
	s.Hint = p.channel
	s.HintPolicy = notify.WakeAll
	s.Heard = func() (bool, time.Duration) {
		w.Rank--
		if w.Rank == 0 {
			return false, grace + 10*time.Millisecond
		}
		return w.Rank < 0, 0
	}
}

func (p *protocol) Resolve(ctx context.Context, w *lockcore.Waiter) (bool, error) {
	_, applied, err := opsScript.Resolve(ctx, p.client, p.write(opAcquire, w.ID, w.Hub.ID(), true, w.Started, w.Pub, w.Req))
	return applied, err
}

func (p *protocol) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	_ = p.exec(ctx, opDequeue, w.ID, w.Hub.ID(), w.Reentrant, time.Now(), w.Pub, "").Err()
}

func (p *protocol) Release(ctx context.Context, pub, id string, reentrant bool, req string) scripts.Reply {
	return p.exec(ctx, opRelease, id, "", reentrant, time.Now(), pub, req)
}

func (p *protocol) Force(ctx context.Context, pub string) scripts.Reply {
	return p.exec(ctx, opForce, "", "", false, time.Now(), pub, "")
}

// exec runs mutex_ops for owner id waiting through the Hub hubID, its
// script sent at now, recorded against req unless that is "". Acquisitions
// and releases wait for replicas; dequeues and forced unlocks need not.
func (p *protocol) exec(ctx context.Context, op, id, hubID string, reentrant bool, now time.Time, pub, req string) scripts.Reply {
	return opsScript.Exec(ctx, p.client, p.write(op, id, hubID, reentrant, now, pub, req))
}

// write is the request of an operation of mutex_ops (see exec).
func (p *protocol) write(op, id, hubID string, reentrant bool, now time.Time, pub, req string) scripts.Write {
	flag := "0"
	if reentrant {
		flag = "1"
	}
	w := scripts.Write{
		Keys: p.keys,
		Args: []any{op, id, hubID + "/" + id, scripts.Ms(p.cfg.TTL()), flag, now.UnixMilli(),
			scripts.Ms(queueTimeout), pub, scripts.Ms(grace)},
		Once: req,
	}
	if op != opDequeue && op != opForce {
		w.Sync = p.cfg.Sync.Timeout()
	}
	return w
}
