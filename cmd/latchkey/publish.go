package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// publish returns the command that the library's scripts publish with on
// c, as its Hub decides (internal/notify): SPUBLISH on a cluster whose
// nodes answer PUBSUB SHARDNUMSUB (Redis 7), PUBLISH elsewhere. It asks
// the masters of the keys near (every master if none), side by side, from
// the cluster map the client has, and the first answer decides: a master
// that does not answer (frozen, cut off) holds up nothing, and neither
// does reloading the map, which a frozen node can stall.
func (c *conn) publish(ctx context.Context, near ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc, ok := c.client.(*redis.ClusterClient)
	switch {
	case c.pub != "":
		return c.pub, nil
	case !ok:
		c.pub = "PUBLISH"
		return c.pub, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make(chan error)
	send := func(err error) {
		select {
		case answers <- err:
		case <-ctx.Done():
		}
	}
	ask := func(ctx context.Context, node *redis.Client) error {
		send(node.Do(ctx, "PUBSUB", "SHARDNUMSUB").Err())
		return nil
	}
	go func() {
		defer close(answers)
		if len(near) == 0 {
			if err := cc.ForEachMaster(ctx, ask); err != nil {
				send(err)
			}
			return
		}
		nodes := map[*redis.Client]bool{}
		for _, k := range near {
			node, err := cc.MasterForKey(ctx, k)
			if err != nil {
				send(err)
				continue
			}
			nodes[node] = true
		}
		var wg sync.WaitGroup
		for node := range nodes {
			wg.Go(func() { _ = ask(ctx, node) })
		}
		wg.Wait()
	}()
	var reply redis.Error
	var last error = errNoReply
	for err := range answers {
		switch {
		case err == nil:
			c.pub = "SPUBLISH"
		case errors.As(err, &reply):
			c.pub = "PUBLISH"
		default:
			last = err
			continue
		}
		return c.pub, nil
	}
	return "", fmt.Errorf("%s: the publish command: %w", c.server, last)
}
