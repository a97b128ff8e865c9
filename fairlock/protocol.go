package fairlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// The fair lock's scripts, one per operation
// (scripts/fragment/fair_decide.lua has the rules they share).
var (
	acquireScript = scripts.Get("fair_acquire") // acquire and try
	releaseScript = scripts.Get("fair_release")
	dequeueScript = scripts.Get("fair_dequeue")
	forceScript   = scripts.Get("fair_force")
	deleteScript  = scripts.Get("fair_delete")
)

// The operations of the fair lock's scripts.
const (
	opAcquire = "acquire" // try, and queue up if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
	opDelete  = "delete"
)

// protocol is the fair lock's side of lockcore.Protocol: its scripts on
// Redisson's RFairLock keys and latchkey's heartbeats beside them.
type protocol struct {
	client  redis.UniversalClient
	cfg     *config
	keys    []string // the fair lock scripts' KEYS: lock, queue, deadlines, heartbeats, channel prefixes, grant, token
	channel string   // prefix of each waiter's own channel (Redisson's)
	hubs    string   // prefix of each Hub's channel
}

func newProtocol(client redis.UniversalClient, name string, cfg *config) *protocol {
	l := keys.LockOf(name)
	return &protocol{
		client:  client,
		cfg:     cfg,
		keys:    []string{l.Name, l.FairQueue, l.FairDeadlines, l.Heartbeats, l.Channel, l.Grant, l.Hubs, l.FairToken},
		channel: l.Channel,
		hubs:    l.Hubs,
	}
}

func (p *protocol) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	// A waiter queues before its letters can be heard (w.Heard): a fair
	// lock's release never drops a waiter it cannot reach, which keeps
	// its place until its liveness timeout.
	op := opAcquire
	if w.Try {
		op = opTry
	}
	rep := p.exec(ctx, op, w.ID, w.HubID(), w.Key, w.Started, w.Pub, w.Reentry(), w.Req)
	vs, err := scripts.Ints(rep.Cmd)
	switch {
	case err != nil:
		return lockcore.Attempt{}, err
	case len(vs) < 3:
		return lockcore.Attempt{}, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
	case vs[0] == 1:
		return lockcore.Attempt{OK: true, Holds: vs[1], Token: vs[2], Reply: rep}, nil
	}
	w.Foreign = vs[2] == 1
	if len(vs) > 3 {
		w.ServerTime(vs[3], w.Started)
	}
	if len(vs) > 4 {
		w.Rank = vs[4] // a polling waiter's schedule (see lockcore's wait.Spec.Rank)
	}
	return lockcore.Attempt{Retry: scripts.Millis(vs[1]), Reply: rep}, nil
}

// Listen makes w sleep on its Hub's channel, where latchkey's scripts
// write it letters (see lockcore.Waiter.Letter): when a release grants it
// the lock, when the waiter ahead was granted it, or when it heads the
// queue. While a Redisson client holds the lock or waits ahead of w, w
// listens on Redisson's channel of its own as well, where Redisson's
// unlock tells the first waiter; a Hub's channel serves every waiter of
// the client, and needs no subscription of its own per Lock.
func (p *protocol) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Wake = wait.Channel{Name: p.hubs + ":" + w.Hub.ID(), Policy: notify.WakeOne}
	s.Mail = w.Mail()
	s.Hint = ownChannel{w, p.channel + ":" + w.ID}
}

// ownChannel is Redisson's channel of the waiter's owner id, on which a
// release that finds the waiter next in line wakes it: it attempts on each
// message, while its attempts find a Redisson client there.
type ownChannel struct {
	w    *lockcore.Waiter
	name string
}

func (o ownChannel) Channel() wait.Channel         { return wait.Channel{Name: o.name} }
func (o ownChannel) Active() bool                  { return o.w.Foreign }
func (ownChannel) Expect() int                     { return 1 }
func (ownChannel) Heard(int) (bool, time.Duration) { return true, 0 }

func (p *protocol) Resolve(ctx context.Context, w *lockcore.Waiter) (bool, error) {
	_, applied, err := p.write(opAcquire, w.ID, w.HubID(), w.Key, w.Started, w.Pub, w.Reentry(), w.Req).Resolve(ctx, p.client)
	return applied, err
}

// Dequeue leaves the queue at once, waking the next waiter if w was first,
// rather than stalling it for the liveness timeout.
func (p *protocol) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	_ = p.exec(ctx, opDequeue, w.ID, w.HubID(), w.Key, time.Now(), w.Pub, w.Reentry(), "").Err()
}

func (p *protocol) Release(ctx context.Context, pub, id string, _, _ bool, req string) rt.Reply {
	return p.exec(ctx, opRelease, id, "", "", time.Now(), pub, "1", req)
}

// Alarm is on latchkey_lock__forced, where latchkey's force-unlocks name
// the owners they forced out. Redisson's publish only to the first waiter,
// on a channel of its own: a holder forced out by one finds it at its next
// renewal.
func (p *protocol) Alarm() hold.Alarm {
	return hold.Alarm{Channel: keys.LockOf(p.keys[0]).Forced, Forced: true}
}

func (p *protocol) Force(ctx context.Context, pub string) rt.Reply {
	return p.exec(ctx, opForce, "", "", "", time.Now(), pub, "0", "")
}

func (p *protocol) Delete(ctx context.Context, pub string) rt.Reply {
	return p.exec(ctx, opDelete, "", "", "", time.Now(), pub, "0", "")
}

// exec runs the fair lock's operation op for owner id, waiting through the
// Hub hub for letters to key ("" for a release or forced unlock), at time
// now, recorded against req unless that is ""; reentry tells an
// acquisition whether id may already hold the lock (see
// lockcore.Waiter.Reentry). Acquisitions, releases and the dequeues that
// may give back a grant wait for replicas; forced unlocks need not.
func (p *protocol) exec(ctx context.Context, op, id, hub, key string, now time.Time, pub, reentry, req string) rt.Reply {
	return p.write(op, id, hub, key, now, pub, reentry, req).Exec(ctx, p.client)
}

// write is the request of the fair lock's operation op (see exec), with
// the script of op. It panics on an unknown op.
func (p *protocol) write(op, id, hub, key string, now time.Time, pub, reentry, req string) rt.Call {
	w := rt.Write{Keys: p.keys, Once: req}
	if op != opForce && op != opDelete {
		w.Sync = p.cfg.Sync.Timeout()
	}
	args := func(own ...any) []any {
		own = append([]any{id, scripts.Ms(p.cfg.TTL()), scripts.Ms(p.cfg.wait)}, own...)
		return handoff.ScriptArgs(p.client, now, pub, p.cfg.liveness, own...)
	}
	switch op {
	case opAcquire, opTry:
		w.Args = args(reentry, hub, key, handoff.Flag(op == opTry))
		return rt.Call{Script: acquireScript, Write: w}
	case opRelease:
		w.Args = args()
		w.Sole = true // a release's record is its own
		return rt.Call{Script: releaseScript, Write: w}
	case opDequeue:
		w.Args = args(hub, key)
		return rt.Call{Script: dequeueScript, Write: w}
	case opForce:
		// and the channel that tells a watch who was forced out
		w.Keys = append(p.keys[:len(p.keys):len(p.keys)], keys.LockOf(p.keys[0]).Forced)
		w.Args = args()
		return rt.Call{Script: forceScript, Write: w}
	case opDelete:
		w.Args = handoff.ScriptArgs(p.client, now, pub, p.cfg.liveness)
		return rt.Call{Script: deleteScript, Write: w}
	}
	panic("fairlock: unknown operation " + op)
}
