package election

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

// recordWait is how long an observer waits for a candidate that took the
// lock to record its value: it does so at once, unless it died meanwhile.
const recordWait = time.Second

// A Leader is who leads an election. The zero Leader means that nobody
// does.
type Leader struct {
	// Owner is the owner id of the leader's hold on the election's lock:
	// a latchkey owner id, or a Redisson client's <uuid>:<thread id> for
	// a Java client that locked the name.
	Owner string
	// Value is what the leader proclaimed: Campaign's value, or Proclaim's
	// since. It is empty for a holder that did not campaign.
	Value string
	// Term is the fencing token of the leader's hold, which strictly
	// increases from one leadership to the next; 0 for a holder that did
	// not campaign.
	Term int64
}

// Leader returns the current leader, or the zero Leader if nobody leads. A
// candidate that took the lock and has not recorded its value yet, a
// moment, shows with its Owner only.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	if err := rt.Usable(ctx, e.keys.Name, e.client); err != nil {
		return Leader{}, e.errorf("leader", err)
	}
	l, _, err := e.read(ctx)
	if err != nil {
		return Leader{}, e.errorf("leader", err)
	}
	return l, nil
}

// read returns the current leader and how long its lock lasts unless
// renewed (negative: no TTL, or no leader).
func (e *Election) read(ctx context.Context) (Leader, time.Duration, error) {
	vs, err := e.cfg.Sender(e.client).Read(ctx, scripts.ElectionLeader{Election: e.keys}.Request()).Slice()
	if err != nil {
		return Leader{}, 0, err
	}
	if len(vs) == 0 {
		return Leader{}, -1, nil
	}
	var l Leader
	var pttl int64
	ok := len(vs) == 2 || len(vs) == 4
	if ok {
		l.Owner, ok = vs[0].(string)
		pttl, _ = vs[1].(int64)
	}
	if ok && len(vs) == 4 {
		l.Value, _ = vs[2].(string)
		l.Term, ok = vs[3].(int64)
	}
	if !ok {
		return Leader{}, 0, fmt.Errorf("leader script: unexpected reply %v", vs)
	}
	return l, scripts.Millis(pttl), nil
}

// Observe returns a channel of the election's leaders: the current one
// first (the zero Leader if nobody leads), then each change of leader, of
// its value, or to nobody, as it happens. Observers do not poll: they wake
// on the messages candidates publish, and when the leader's lease would
// run out unrenewed, which is how a leader that died is seen to go. A
// Leader is sent once its value is recorded: a candidate between its
// acquisition and its record is waited for, up to a second. Observers
// that fall behind see the latest leader, not every one in between. An
// outage is ridden out: the observer looks again a second after a look
// fails. The channel is closed when ctx is done, and on an error that
// looking again cannot mend (a closed client or Hub, a command the user may
// not run), as etcd's Observe closes when its watcher is disrupted.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	flight.MustContext(ctx)
	ch := make(chan Leader)
	go e.observe(ctx, ch)
	return ch
}

func (e *Election) observe(ctx context.Context, ch chan<- Leader) {
	defer close(ch)
	var (
		sent    Leader
		first   = true
		next    Leader
		pending time.Time // when a holder without a record was first seen
	)
	look := func(ctx context.Context) (bool, time.Duration, error) {
		l, ttl, err := e.read(ctx)
		if err != nil {
			return false, 0, err
		}
		if l.Term == 0 && l.Owner != "" && owner.Latchkey(l.Owner) && l != sent {
			// A candidate records its value right after its acquisition.
			if pending.IsZero() {
				pending = time.Now()
			}
			if left := recordWait - time.Since(pending); left > 0 {
				if ttl > 0 {
					left = min(left, ttl)
				}
				return false, left, nil
			}
		}
		pending = time.Time{}
		if first || l != sent {
			next = l
			return true, 0, nil
		}
		return false, ttl, nil // a leader that dies is seen when its lease ends
	}
	for {
		ok, err := wait.Until(ctx, -1, wait.Spec{
			Client: e.client,
			Silent: true, // an observer acquires nothing for the hooks to hear
			Hub:    e.cfg.HubFor(e.client),
			Wake:   wait.Channel{Name: e.keys.Changes, Policy: notify.WakeAll},
			Call:   wait.Attempt(look),
		})
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !flight.Transient(err):
			return // a closed client or Hub, a permission the user lacks
		case err != nil || !ok:
			// An outage outlasted the ride-out: look again a little later.
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
			continue
		}
		select {
		case ch <- next:
			sent, first = next, false
		case <-ctx.Done():
			return
		}
	}
}
