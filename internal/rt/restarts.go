package rt

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// watchChannel, then ":" and a held key's hash tag, is the channel a
// client's Hub listens on to notice that a server carrying its holds came
// back: nobody publishes on it, but the Hub
// wakes its subscribers when it re-establishes a connection (see
// notify.Hub), as it does after a restart, a failover or a cut.
const watchChannel = "latchkey_watch"

// restarts is the watchdog's lease.Watcher: while a client holds anything
// the watchdog renews, its shared Hub listens on every server that carries
// one (one subscription per server), and the watchdog renews every hold at
// once (lease.Scheduler.Recheck) when one of those connections comes back.
// A client that held nothing for keepFor keeps no subscription for it
// (the loop looks at least every keepFor). On a cluster without sharded pub/sub the Hub has one connection, to one node, and
// only that node's return is noticed; the others' holds are found out at
// their next renewal, as before.
type restarts struct {
	client  redis.UniversalClient
	hub     *notify.Hub
	recheck func()
	cluster bool

	mu      sync.Mutex
	keys    map[string]int // held keys -> holds
	idle    time.Time      // when the last hold ended, while none is held
	running bool
	kick    chan struct{}
}

// keepFor is how long the watches stay after the last hold ended: most
// holds are short, and a client that locks again soon finds them in place
// rather than paying for them at every Lock.
const keepFor = 5 * time.Second

func newRestarts(c redis.UniversalClient, hub *notify.Hub, recheck func()) *restarts {
	_, cluster := c.(*redis.ClusterClient)
	return &restarts{client: c, hub: hub, recheck: recheck, cluster: cluster, keys: map[string]int{}, kick: make(chan struct{}, 1)}
}

// Watch and Unwatch cost a Lock and an Unlock a map update: they wake the
// loop only for a cluster's new key, whose master may not be watched yet.
// A watch of a key no longer held stays until the loop looks again.
func (r *restarts) Watch(key string) {
	if Polling(r.client) {
		return // its Hub must not subscribe: renewals find a restart
	}
	r.mu.Lock()
	r.keys[key]++
	poke := r.cluster && r.keys[key] == 1
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start {
		go r.run()
	} else if poke {
		r.poke()
	}
}

func (r *restarts) Unwatch(key string) {
	r.mu.Lock()
	if r.keys[key]--; r.keys[key] <= 0 {
		delete(r.keys, key)
		if len(r.keys) == 0 {
			r.idle = time.Now()
		}
	}
	r.mu.Unlock()
}

func (r *restarts) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// A watch is the subscription on one server.
type watch struct {
	sub  *notify.Subscription
	stop chan struct{}
}

// run keeps one subscription on each server that carries a held key,
// until none is held. A subscription that fails is tried again a second
// later, or at the next change.
func (r *restarts) run() {
	watches := map[string]*watch{} // by server
	defer func() {
		for _, w := range watches {
			w.close()
		}
	}()
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	if isFailover(r.client) {
		stop := make(chan struct{})
		defer close(stop)
		go probe(r.client, stop)
	}
	look := time.NewTimer(keepFor)
	defer look.Stop()
	for {
		want, ok := r.servers()
		failed := ok && len(want) == 0
		for server, channel := range want {
			if watches[server] == nil {
				w, err := r.subscribe(channel)
				if err != nil {
					failed = true
					continue
				}
				watches[server] = w
			}
		}
		for server, w := range watches {
			if _, held := want[server]; ok && !held {
				w.close()
				delete(watches, server)
			}
		}
		if failed {
			retry.Reset(time.Second)
		}
		select {
		case <-r.kick:
		case <-retry.C:
		case <-look.C:
			next, stop := r.stopIdle()
			if stop {
				return
			}
			look.Reset(next)
		case <-r.hub.Done(): // the client's runtime was closed
			r.mu.Lock()
			r.running = false
			r.mu.Unlock()
			return
		}
	}
}

// stopIdle marks the loop stopped, and reports so, if nothing has been
// held for keepFor; otherwise it returns when to look again.
func (r *restarts) stopIdle() (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) > 0 {
		return keepFor, false
	}
	if left := keepFor - time.Since(r.idle); left > 0 {
		return left, false
	}
	r.running = false
	return 0, true
}

// servers returns the channel to watch on each server that carries a held
// key, or false when none is held.
func (r *restarts) servers() (map[string]string, bool) {
	r.mu.Lock()
	held := make([]string, 0, len(r.keys))
	for k := range r.keys {
		held = append(held, k)
	}
	r.mu.Unlock()
	if len(held) == 0 {
		return nil, false
	}
	out := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cc, cluster := r.client.(*redis.ClusterClient)
	pub, err := r.hub.PublishCommand(ctx)
	if err != nil {
		return out, true // tried again a second later
	}
	sharded := cluster && pub == "SPUBLISH"
	for _, k := range held {
		// The channel is named after a held key, in its slot, so that a
		// user whose ACL grants the primitives' channels may subscribe.
		channel := watchChannel + ":" + keys.Tag(k)
		if !sharded {
			out[""] = channel
			break
		}
		node, err := cc.MasterForKey(ctx, k)
		if err != nil {
			continue
		}
		if addr := node.Options().Addr; out[addr] == "" {
			out[addr] = channel // on k's master
		}
	}
	return out, true
}

func (r *restarts) subscribe(channel string) (*watch, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sub, err := r.hub.Subscribe(ctx, channel, notify.WakeAll)
	if err != nil {
		return nil, err
	}
	w := &watch{sub: sub, stop: make(chan struct{})}
	go func() {
		for {
			select {
			case <-sub.C():
				r.recheck()
			case <-sub.Done():
				return
			case <-w.stop:
				return
			}
		}
	}()
	return w, nil
}

func (w *watch) close() {
	close(w.stop)
	w.sub.Close()
}

var _ lease.Watcher = (*restarts)(nil)
