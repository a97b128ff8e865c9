package mutex

import (
	"context"
	"fmt"
	"sync"
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

// protocol is the mutex's side of lockcore.Protocol: its scripts
// (scripts.Mutex*) on a Redisson RLock hash, and the waiter queue beside
// it.
type protocol struct {
	client redis.UniversalClient
	cfg    *config
	lock   keys.Lock
	boxes  keys.Boxes // lock's, boxed once for every request

	// alone is the owner id of the handle's latest hold whose acquisition
	// found the lock free, without queueing: its release goes the lone way
	// first (scripts.MutexReleaseAlone), which costs a round trip more
	// when someone queued since. A hold that queued was contended, and is
	// released the full way; so is every hold while crowded: the handle's
	// latest release found waiters queued (two Locks of one process taking
	// turns, say), until a full release finds none.
	mu      sync.Mutex
	alone   string
	crowded bool
	// wake is the channel of the latest Hub waiters listened on, hub's:
	// the same for every Lock of a handle, unless the Hub was replaced.
	hub, wake string
}

func newProtocol(client redis.UniversalClient, name string, cfg *config) *protocol {
	p := &protocol{client: client, cfg: cfg, lock: keys.LockOf(name)}
	p.lock.Box(&p.boxes)
	return p
}

// send sends req on the mutex's send path.
func (p *protocol) send(ctx context.Context, req scripts.Request) rt.Reply {
	return p.cfg.Sender(p.client).Send(ctx, req)
}

func (p *protocol) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	// A single attempt never queues; nor does one whose letters nobody
	// hears yet: a release would drop it (see wait.Mail.Live).
	try := w.Try || !w.Heard && !w.Polling
	if try && !w.Queued && w.Reentry() != scripts.Holding {
		if a, settled, err := p.takeFree(ctx, w); settled {
			return a, err
		}
	}
	rep := p.send(ctx, p.acquire(w, try).Request())
	w.HeardRelease = false
	vs, err := scripts.Ints(rep.Cmd)
	if !try && (err != nil || len(vs) > 0 && vs[0] == 0) {
		w.Queued = true // maybe: a reply that was lost may have said so
	}
	switch {
	case err != nil:
		return lockcore.Attempt{}, err
	case len(vs) < 3 || vs[0] == 0 && len(vs) < 4:
		return lockcore.Attempt{}, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
	case vs[0] == 1:
		p.acquired(w.ID, !w.Queued)
		return lockcore.Attempt{OK: true, Token: vs[1], Holds: vs[2], Reply: rep}, nil
	}
	w.Rank, w.Foreign = vs[2], vs[3] == 1
	if len(vs) > 4 {
		w.ServerTime(vs[4], w.Started)
	}
	return lockcore.Attempt{Retry: scripts.Millis(vs[1]), Reply: rep}, nil
}

// acquire is w's acquisition request.
func (p *protocol) acquire(w *lockcore.Waiter, try bool) scripts.MutexAcquire {
	return scripts.MutexAcquire{Lock: p.lock, Owner: w.ID, Entry: p.entry(w), Lease: p.cfg.TTL(),
		Reentry: w.Reentry(), Queued: w.Queued, Try: try, HeardRelease: w.HeardRelease,
		YieldFor: handoff.Yield, Record: w.Req}
}

// takeFree tries to take a free lock for w, which holds nothing through
// the handle and never queued, with a fast path's own script: a fresh
// id's, or an owner's, recorded. It leaves the attempt unsettled, for the
// full acquisition, when the owner's try finds the lock not free.
func (p *protocol) takeFree(ctx context.Context, w *lockcore.Waiter) (a lockcore.Attempt, settled bool, err error) {
	var take scripts.Request
	if w.Reentrant {
		take = scripts.MutexTakeOwner{Lock: p.lock, Owner: w.ID, Lease: p.cfg.TTL(), Record: w.Req}.Request()
	} else {
		take = scripts.MutexTakeFree{Lock: p.lock, Owner: w.ID, Lease: p.cfg.TTL()}.Request()
	}
	rep := p.send(ctx, take)
	vs, err := scripts.Ints(rep.Cmd)
	switch {
	case err != nil:
		return lockcore.Attempt{}, true, err
	case len(vs) == 1 && vs[0] == scripts.TakeOwnerNot:
		return lockcore.Attempt{}, false, nil
	case len(vs) < 2 || vs[0] == 1 && len(vs) < 3:
		return lockcore.Attempt{}, true, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
	case vs[0] == 1:
		p.acquired(w.ID, true)
		return lockcore.Attempt{OK: true, Token: vs[1], Holds: vs[2], Reply: rep}, true, nil
	}
	w.Rank, w.Foreign = -1, false
	return lockcore.Attempt{Retry: scripts.Millis(vs[1]), Reply: rep}, true, nil
}

// acquired notes that owner id acquired the lock, finding it free or not.
func (p *protocol) acquired(id string, free bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if free {
		p.alone = id
	} else if p.alone == id {
		p.alone = ""
	}
}

// goesAlone reports whether owner id's hold found the lock free.
func (p *protocol) goesAlone(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.alone == id && !p.crowded
}

// found notes whether the latest release found waiters queued.
func (p *protocol) found(queued bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crowded = queued
}

// entry is w's entry in the waiter queue: its Hub, and its letters' key.
func (p *protocol) entry(w *lockcore.Waiter) string {
	return keys.Entry{Hub: w.HubID(), Key: w.Key}.String()
}

// Listen makes w sleep on its Hub's own channel, where a release by a
// latchkey holder writes it a letter when it grants w the lock, or when it
// grants the waiter just ahead of w, which w then watches for the grace
// (see lockcore.Waiter.Letter). So a release wakes two waiters at most,
// whatever the number of clients waiting.
//
// A Redisson holder's release grants nothing and only publishes on
// Redisson's shared channel: while its attempts find such a holder, w
// counts the releases there too. A waiter with rank waiters ahead of it
// heads the queue after rank releases, and its turn comes with the next:
// it tries then at once, as Redisson's waiters do, whom a pause would hand
// every such release; the wait loop reads first the letter of a latchkey
// grant, which follows Redisson's message on the same connection.
func (p *protocol) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Wake = wait.Channel{Name: p.wakeChannel(w.Hub.ID()), Policy: notify.WakeOne}
	s.Mail = w.Mail()
	s.Hint = releases{w, p.lock.Channel}
}

// wakeChannel returns the channel on which the Hub whose id is hub hears
// this lock's letters.
func (p *protocol) wakeChannel(hub string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hub != hub {
		p.hub, p.wake = hub, keys.HubChannel(p.lock.Hubs, hub)
	}
	return p.wake
}

// releases counts a Redisson holder's releases on its shared channel,
// while the waiter's attempts find such a holder (see Listen).
type releases struct {
	w       *lockcore.Waiter
	channel string
}

func (r releases) Channel() wait.Channel { return wait.Channel{Name: r.channel} }
func (r releases) Active() bool          { return r.w.Foreign }
func (r releases) Expect() int           { return max(int(r.w.Rank), 1) }

func (r releases) Heard(n int) (bool, time.Duration) {
	r.w.Rank -= int64(n)
	r.w.HeardRelease = true
	switch {
	case r.w.Rank == 0:
		return false, handoff.Grace + 10*time.Millisecond
	}
	return r.w.Rank < 0, 0
}

func (p *protocol) Resolve(ctx context.Context, w *lockcore.Waiter) (bool, error) {
	_, applied, err := p.cfg.Sender(p.client).Resolve(ctx, p.acquire(w, false).Request())
	return applied, err
}

func (p *protocol) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	_ = p.send(ctx, scripts.MutexDequeue{Lock: p.lock, Entry: p.entry(w), Yield: scripts.YieldLock}.Request()).Err()
}

func (p *protocol) Release(ctx context.Context, id string, reentrant bool, req string) rt.Reply {
	// A hold that found the lock free is released the lone way first. A
	// fresh id's full release after it shares its record, so a resend of
	// either, or a retry of the whole (rt.Retry), replays what applied; a
	// fresh id holds once, and a second try finds nothing. A re-entrant
	// owner's count must never be taken down twice: its lone release
	// records that it did nothing, and the full release goes with a
	// record of its own (keys.OnceThen), the same on every retry.
	if p.goesAlone(id) {
		rep := p.send(ctx, scripts.MutexReleaseAlone{Lock: p.lock, Owner: id, Lease: p.cfg.TTL(), Reentrant: reentrant, Record: req}.Request())
		if n, err := scripts.Int(rep.Cmd); err != nil || n != scripts.ReleaseQueued {
			return rep
		}
		p.found(true)
		if reentrant {
			req = keys.OnceThen(req)
		}
	}
	rep := p.send(ctx, scripts.MutexRelease{Lock: p.lock, Owner: id, Lease: p.cfg.TTL(), Reentrant: reentrant,
		Yield: scripts.YieldLock, Record: req}.Request())
	if n, err := scripts.Int(rep.Cmd); err == nil && n >= 1 {
		p.found(n == scripts.ReleasedQueued)
		rep.SetVal(int64(1))
	}
	return rep
}

// Alarm is on latchkey_lock__forced, where latchkey's force-unlocks name
// the owners they forced out.
func (p *protocol) Alarm() hold.Alarm { return hold.Alarm{Channel: p.lock.Forced} }

func (p *protocol) Force(ctx context.Context) rt.Reply {
	return p.send(ctx, scripts.MutexForce{Lock: p.lock, Yield: scripts.YieldLock}.Request())
}

func (p *protocol) Delete(ctx context.Context) rt.Reply {
	return p.send(ctx, scripts.MutexDelete{Lock: p.lock}.Request())
}
