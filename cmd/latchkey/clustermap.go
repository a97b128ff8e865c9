package main

import (
	"cmp"
	"context"
	"net"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// clusterMap returns the function by which a cluster client of o loads
// the cluster's map (ClusterOptions.ClusterSlots): it asks every node it
// knows at once, the seeds and the nodes of the last map, and takes the
// first map that comes. go-redis asks them one after the other, each
// within the read timeout, which a frozen node asked first uses up.
func clusterMap(o *redis.ClusterOptions) func(context.Context) ([]redis.ClusterSlot, error) {
	var mu sync.Mutex
	known := slices.Clone(o.Addrs)
	return func(ctx context.Context) ([]redis.ClusterSlot, error) {
		mu.Lock()
		addrs := slices.Clone(known)
		mu.Unlock()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type answer struct {
			addr  string
			slots []redis.ClusterSlot
			err   error
		}
		answers := make(chan answer, len(addrs))
		for _, addr := range addrs {
			go func() {
				node := redis.NewClient(nodeOptions(o, addr))
				defer node.Close()
				// CLUSTER SLOTS, as go-redis asks (ClusterShards is not
				// what ClusterOptions.ClusterSlots returns).
				cmd := redis.NewClusterSlotsCmd(ctx, "cluster", "slots")
				_ = node.Process(ctx, cmd)
				answers <- answer{addr, cmd.Val(), cmd.Err()}
			}()
		}
		var first error
		for range addrs {
			a := <-answers
			if a.err != nil {
				first = cmp.Or(first, a.err)
				continue
			}
			fillHosts(a.slots, a.addr)
			mu.Lock()
			known = mapNodes(o.Addrs, a.slots)
			mu.Unlock()
			return a.slots, nil
		}
		return nil, cmp.Or(first, errNoReply)
	}
}

// fillHosts gives the nodes of slots with a loopback address, or none (a
// node that does not know its own), the host of origin, the node that
// answered, unless it is a loopback address too, as go-redis does; and
// then "localhost", which go-redis leaves alone: it would empty the host
// of a loopback address in a map that no node of its own asking gave.
func fillHosts(slots []redis.ClusterSlot, origin string) {
	host, _, err := net.SplitHostPort(origin)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsLoopback() {
		host = "localhost"
	}
	for _, s := range slots {
		for i, n := range s.Nodes {
			h, port, err := net.SplitHostPort(n.Addr)
			if ip := net.ParseIP(h); err == nil && (h == "" || ip != nil && ip.IsLoopback()) {
				s.Nodes[i].Addr = net.JoinHostPort(host, port)
			}
		}
	}
}

// mapNodes returns the seeds and every node that slots name.
func mapNodes(seeds []string, slots []redis.ClusterSlot) []string {
	addrs := slices.Clone(seeds)
	for _, s := range slots {
		for _, n := range s.Nodes {
			addrs = append(addrs, n.Addr)
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs)
}

// nodeOptions are the options of a client of the node at addr, as the
// cluster client of o reaches it.
func nodeOptions(o *redis.ClusterOptions, addr string) *redis.Options {
	return &redis.Options{
		Addr: addr, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig, Protocol: o.Protocol,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled, MaxRetries: -1, PoolSize: 1,
	}
}
