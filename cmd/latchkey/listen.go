package main

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// subscribers returns how many connections listen on each channel, as the
// library's clients listen: with SSUBSCRIBE where its Hub publishes with
// SPUBLISH (a Redis 7 cluster), counted by PUBSUB SHARDNUMSUB on the
// channel's master; otherwise with SUBSCRIBE, counted by PUBSUB NUMSUB on
// the server, or summed over every node of a cluster, whose subscribers
// may be on any of them. A server that refuses to count (an ACL without
// +pubsub) gives nil and no error: the counts are then unknown. The
// caller's own subscriptions (self) are taken off.
func subscribers(ctx context.Context, c *conn, channels []string, self selfListens) (map[string]int64, error) {
	if len(channels) == 0 {
		return map[string]int64{}, nil
	}
	pub, err := c.publish(ctx, channels...)
	if err != nil {
		return nil, err
	}
	var counts map[string]int64
	switch cl := c.client.(type) {
	case *redis.ClusterClient:
		if pub == "SPUBLISH" {
			counts, err = shardCounts(ctx, cl, channels)
		} else {
			counts, err = clusterCounts(ctx, cl, channels)
		}
	default:
		counts, err = c.client.PubSubNumSub(ctx, channels...).Result()
	}
	var refused redis.Error
	if errors.As(err, &refused) {
		return nil, nil
	}
	for ch := range self {
		if n, ok := counts[ch]; ok {
			counts[ch] = max(n-1, 0)
		}
	}
	return counts, err
}

// selfListens is the set of channels on which the reading process itself
// listens (a watch follows a synchronizer's channels), one connection
// each, which is no waiter's.
type selfListens map[string]bool

// shardCounts asks each channel's master for its sharded subscribers:
// one pipeline per master, the masters side by side.
func shardCounts(ctx context.Context, cl *redis.ClusterClient, channels []string) (map[string]int64, error) {
	byMaster := map[*redis.Client][]string{}
	for _, ch := range channels {
		node, err := cl.MasterForKey(ctx, ch)
		if err != nil {
			return nil, err
		}
		byMaster[node] = append(byMaster[node], ch)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	counts := make(map[string]int64, len(channels))
	for node, chs := range byMaster {
		wg.Go(func() {
			cmds := make([]*redis.MapStringIntCmd, len(chs))
			_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, ch := range chs {
					cmds[i] = p.PubSubShardNumSub(ctx, ch)
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			for i, ch := range chs {
				counts[ch] = cmds[i].Val()[ch]
			}
		})
	}
	wg.Wait()
	return counts, errors.Join(errs...)
}

// clusterCounts sums the subscribers of every node of a cluster: a
// cluster's PUBLISH reaches the subscribers of all of them.
func clusterCounts(ctx context.Context, cl *redis.ClusterClient, channels []string) (map[string]int64, error) {
	var mu sync.Mutex
	counts := make(map[string]int64, len(channels))
	err := cl.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		m, err := node.PubSubNumSub(ctx, channels...).Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for ch, n := range m {
			counts[ch] += n
		}
		return nil
	})
	return counts, err
}

// sharedChannel returns the channel on which st's waiters without a
// queue entry wait, "" for a kind that has none: a fair lock's waiters
// all queue, and a plain integer's channel depends on what it is.
func sharedChannel(st *State) string {
	n := namesOf(st.Name)
	switch st.Kind {
	case kindMutex, kindEitherLock:
		return n.lock.Channel
	case kindRWLock:
		return n.rw.Channel
	case kindSemaphore, kindPermits:
		return n.sem.Channel
	case kindLatch:
		return n.latchChannel
	}
	return ""
}

// listenStep counts the subscribers of st's shared channel and of each
// waiter's own channel, and tells from them and from each entry's
// deadline which waiters live; then it reads the processes behind the
// owners (identifyStep).
func listenStep(c *conn, st *State) step {
	return func(r *round) func() (step, error) {
		if st.Channel = sharedChannel(st); st.Channel != "" {
			r.count = append(r.count, st.Channel)
		}
		for _, w := range st.Queue {
			if w.channel != "" {
				r.count = append(r.count, w.channel)
			}
		}
		return func() (step, error) {
			if r.countErr != nil {
				return nil, c.keyErr(st.Name, r.countErr)
			}
			counts := r.counts
			if counts != nil && st.Channel != "" {
				n := counts[st.Channel]
				st.Subscribers = &n
			}
			for i := range st.Queue {
				w := &st.Queue[i]
				if counts != nil && w.channel != "" {
					on := counts[w.channel] > 0
					w.Listening = &on
				}
				if w.InMs < 0 {
					w.LapsedMs = -w.InMs
				}
				w.Alive = w.InMs >= 0 && (w.Listening == nil || *w.Listening)
			}
			return identifyStep(c, st), nil
		}
	}
}

// dead counts the waiters of st that seem dead.
func dead(st *State) int {
	n := 0
	for _, w := range st.Queue {
		if !w.Alive {
			n++
		}
	}
	return n
}
