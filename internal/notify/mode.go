package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// isSharded reports whether h uses sharded pub/sub. On a cluster client
// the first caller probes the server, from a goroutine of its own, which
// every caller waits for within its ctx: the probe's read is not bounded
// by a ctx deadline unless the client applies it (see flight.Bounded).
func (h *Hub) isSharded(ctx context.Context) (bool, error) {
	h.modeMu.Lock()
	if !h.modeSet {
		cc, ok := h.client.(*redis.ClusterClient)
		switch {
		case h.cfg.sharded != nil:
			h.sharded, h.modeSet = *h.cfg.sharded, true
		case !ok:
			h.modeSet = true
		case h.probe == nil:
			h.probe = &probe{done: make(chan struct{})}
			go h.probeSharded(cc, h.probe)
		}
	}
	if h.modeSet {
		defer h.modeMu.Unlock()
		return h.sharded, nil
	}
	p := h.probe
	h.modeMu.Unlock()
	select {
	case <-p.done:
		return p.sharded, p.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// A probe is a look at whether a cluster answers PUBSUB SHARDNUMSUB.
type probe struct {
	done    chan struct{}
	sharded bool
	err     error
}

// probeSharded runs p: Redis 7 answers PUBSUB SHARDNUMSUB; older servers
// reject it. A probe that could not reach the cluster is made again by the
// next caller.
func (h *Hub) probeSharded(cc *redis.ClusterClient, p *probe) {
	err := cc.Do(context.Background(), "PUBSUB", "SHARDNUMSUB").Err()
	var rerr redis.Error
	h.modeMu.Lock()
	switch {
	case err == nil:
		h.sharded, h.modeSet = true, true
	case errors.As(err, &rerr):
		h.sharded, h.modeSet = false, true
	default:
		p.err = fmt.Errorf("pubsub: probe sharded pub/sub: %w", err)
	}
	p.sharded = h.sharded
	h.probe = nil
	h.modeMu.Unlock()
	close(p.done)
}

func (h *Hub) nodeFor(ctx context.Context, name string) (string, error) {
	cc, ok := h.client.(*redis.ClusterClient)
	if !ok {
		return "", nil
	}
	type master struct {
		node *redis.Client
		err  error
	}
	m, ok := flight.Bounded(ctx, h.client, func(ctx context.Context) master {
		node, err := cc.MasterForKey(ctx, name)
		return master{node, err}
	})
	if !ok {
		return "", ctx.Err()
	}
	if m.err != nil {
		return "", fmt.Errorf("pubsub: find the master of %s: %w", name, m.err)
	}
	return m.node.Options().Addr, nil
}
