package fairlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

var opsScript = scripts.Get("fairlock_ops")

// The operations of fairlock_ops.lua.
const (
	opAcquire = "acquire" // try, and queue up if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
)

// protocol is the fair lock's side of lockcore.Protocol: fairlock_ops.lua
// on Redisson's RFairLock keys and latchkey's heartbeats beside them.
type protocol struct {
	client  redis.UniversalClient
	cfg     *config
	keys    []string // lock, queue, deadlines, heartbeats, channel prefix: fairlock_ops's KEYS
	channel string   // prefix of each waiter's own channel
}

func newProtocol(client redis.UniversalClient, name string, cfg *config) *protocol {
	channel := keys.LockChannel(name)
	return &protocol{
		client: client,
		cfg:    cfg,
		keys: []string{
			name,
			keys.Prefix("redisson_lock_queue", name),
			keys.Prefix("redisson_lock_timeout", name),
			keys.Prefix("latchkey_lock_heartbeat", name),
			channel,
		},
		channel: channel,
	}
}

func (p *protocol) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	op := opAcquire
	if w.Try {
		op = opTry
	}
	rep := p.exec(ctx, op, w.ID, w.Started, w.Pub, w.Reentrant, w.Req)
	ok, v, err := scripts.Pair(rep.Cmd)
	switch {
	case err != nil:
		return lockcore.Attempt{}, err
	case ok:
		return lockcore.Attempt{OK: true, Reply: rep}, nil
	}
	return lockcore.Attempt{Retry: scripts.Millis(v), Reply: rep}, nil
}

// Listen makes w sleep on a channel of its own, Redisson's per-waiter
// channel, told only when w heads the queue.
func (p *protocol) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Channel = p.channel + ":" + w.ID
	s.Policy = notify.WakeOne
}

func (p *protocol) Resolve(ctx context.Context, w *lockcore.Waiter) (bool, error) {
	_, applied, err := opsScript.Resolve(ctx, p.client, p.write(opAcquire, w.ID, w.Started, w.Pub, true, w.Req))
	return applied, err
}

// Dequeue leaves the queue at once, waking the next waiter if w was first,
// rather than stalling it for the liveness timeout.
func (p *protocol) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	_ = p.exec(ctx, opDequeue, w.ID, time.Now(), w.Pub, w.Reentrant, "").Err()
}

func (p *protocol) Release(ctx context.Context, pub, id string, _ bool, req string) scripts.Reply {
	return p.exec(ctx, opRelease, id, time.Now(), pub, true, req)
}

func (p *protocol) Force(ctx context.Context, pub string) scripts.Reply {
	return p.exec(ctx, opForce, "", time.Now(), pub, false, "")
}

// exec runs one operation of fairlock_ops.lua for owner id at time now,
// recorded against req unless that is ""; reentrant tells an acquisition
// whether id may already hold the lock. Acquisitions and releases wait for
// replicas; queue upkeep and forced unlocks need not.
func (p *protocol) exec(ctx context.Context, op, id string, now time.Time, pub string, reentrant bool, req string) scripts.Reply {
	return opsScript.Exec(ctx, p.client, p.write(op, id, now, pub, reentrant, req))
}

// write is the request of an operation of fairlock_ops (see exec).
func (p *protocol) write(op, id string, now time.Time, pub string, reentrant bool, req string) scripts.Write {
	flag := "0"
	if reentrant {
		flag = "1"
	}
	w := scripts.Write{
		Keys: p.keys,
		Args: []any{op, id, now.UnixMilli(), pub,
			scripts.Ms(p.cfg.TTL()), scripts.Ms(p.cfg.wait), scripts.Ms(p.cfg.liveness), flag},
		Once: req,
	}
	if op != opDequeue && op != opForce {
		w.Sync = p.cfg.Sync.Timeout()
	}
	return w
}
