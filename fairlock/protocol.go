package fairlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// protocol is the fair lock's side of lockcore.Protocol: its scripts
// (scripts.Fair*) on Redisson's RFairLock keys and latchkey's heartbeats
// beside them.
type protocol struct {
	client redis.UniversalClient
	cfg    *config
	lock   keys.Lock
}

func newProtocol(client redis.UniversalClient, name string, cfg *config) *protocol {
	return &protocol{client: client, cfg: cfg, lock: keys.LockOf(name)}
}

// send sends req on the fair lock's send path.
func (p *protocol) send(ctx context.Context, req scripts.Request) rt.Reply {
	return p.cfg.Sender(p.client).Send(ctx, req)
}

func (p *protocol) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	// A waiter queues before its letters can be heard (w.Heard): a fair
	// lock's release never drops a waiter it cannot reach, which keeps
	// its place until its liveness timeout.
	rep := p.send(ctx, p.acquire(w).Request())
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

// acquire is w's acquisition request.
func (p *protocol) acquire(w *lockcore.Waiter) scripts.FairAcquire {
	return scripts.FairAcquire{Lock: p.lock, Owner: w.ID, Lease: p.cfg.TTL(), Wait: p.cfg.wait,
		Liveness: p.cfg.liveness, Reentry: w.Reentry(), Hub: w.HubID(), Key: w.Key, Try: w.Try, Record: w.Req}
}

// Listen makes w sleep on its Hub's channel, where latchkey's scripts
// write it letters (see lockcore.Waiter.Letter): when a release grants it
// the lock, when the waiter ahead was granted it, or when it heads the
// queue. While a Redisson client holds the lock or waits ahead of w, w
// listens on Redisson's channel of its own as well, where Redisson's
// unlock tells the first waiter; a Hub's channel serves every waiter of
// the client, and needs no subscription of its own per Lock.
func (p *protocol) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Wake = wait.Channel{Name: p.lock.Hubs + ":" + w.Hub.ID(), Policy: notify.WakeOne}
	s.Mail = w.Mail()
	s.Hint = ownChannel{w, p.lock.Channel + ":" + w.ID}
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
	_, applied, err := p.cfg.Sender(p.client).Resolve(ctx, p.acquire(w).Request())
	return applied, err
}

// Dequeue leaves the queue at once, waking the next waiter if w was first,
// rather than stalling it for the liveness timeout.
func (p *protocol) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	_ = p.send(ctx, scripts.FairDequeue{Lock: p.lock, Owner: w.ID, Lease: p.cfg.TTL(), Wait: p.cfg.wait,
		Liveness: p.cfg.liveness, Hub: w.HubID(), Key: w.Key}.Request()).Err()
}

func (p *protocol) Release(ctx context.Context, id string, _ bool, req string) rt.Reply {
	return p.send(ctx, scripts.FairRelease{Lock: p.lock, Owner: id, Lease: p.cfg.TTL(), Wait: p.cfg.wait,
		Liveness: p.cfg.liveness, Record: req}.Request())
}

// Alarm is on latchkey_lock__forced, where latchkey's force-unlocks name
// the owners they forced out. Redisson's publish only to the first waiter,
// on a channel of its own: a holder forced out by one finds it at its next
// renewal.
func (p *protocol) Alarm() hold.Alarm { return hold.Alarm{Channel: p.lock.Forced} }

func (p *protocol) Force(ctx context.Context) rt.Reply {
	return p.send(ctx, scripts.FairForce{Lock: p.lock, Lease: p.cfg.TTL(), Wait: p.cfg.wait,
		Liveness: p.cfg.liveness}.Request())
}

func (p *protocol) Delete(ctx context.Context) rt.Reply {
	return p.send(ctx, scripts.FairDelete{Lock: p.lock, Liveness: p.cfg.liveness}.Request())
}
