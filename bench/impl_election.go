package main

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/election"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// The election impls' leases: as short as etcd allows, so that a run is
// short, and the same for both. etcd's TTL is in whole seconds, and its
// server raises any TTL below its minimum (1.5 election timeouts, rounded
// up to a second: 2s with etcd's default 100ms heartbeat and 1s election
// timeout) to that minimum, so 2s is the shortest it keeps.
const (
	electionLease = 2 * time.Second
	electionTTL   = 2 // etcd session TTL, seconds
)

func init() {
	register(&Impl{
		Name:  "latchkey-election",
		Kind:  KindElection,
		Rank:  90,
		Color: "#004d40",
		About: fmt.Sprintf("latchkey's election (package election) with WithLeaseTimeout(%v): the leader's lock is "+
			"renewed by its client's watchdog every %v; a candidate waits in the lock's queue, woken by the "+
			"release or when the leader's TTL runs out; its term is the lock's fencing token.",
			electionLease, (electionLease / 3).Round(time.Millisecond)),
		New: func(c *Conn, name string) any {
			return latchkeyElector{election.New(c.Client, name, election.WithLeaseTimeout(electionLease))}
		},
		Close: closeLatchkey,
	})
	register(&Impl{
		Name:  "etcd-election",
		Kind:  KindElection,
		Rank:  91,
		Color: "#98df8a",
		Peer:  etcdPeer,
		About: fmt.Sprintf("etcd's concurrency.Election on the etcd impl's server: each candidate has its own "+
			"Session with a TTL of %ds (etcd's minimum with its defaults), which the client keeps alive every "+
			"TTL/3, on a 500ms tick; a candidate watches the key created just before its own, which goes when "+
			"its lease expires (the server looks for expired leases every 500ms); its term is the leader "+
			"key's create revision (Rev).", electionTTL),
		Open: func(ctx context.Context, c *Conn, name string) (any, error) {
			s, err := concurrency.NewSession(c.Peer.(*clientv3.Client), concurrency.WithTTL(electionTTL))
			if err != nil {
				return nil, err
			}
			c.OnClose(func() { _ = s.Close() })
			return etcdElector{concurrency.NewElection(s, "/"+name)}, nil
		},
	})
}

// An Elector is a candidate's handle on a leader election.
type Elector interface {
	// Campaign blocks until the candidate leads, or ctx ends, and returns
	// the term of its leadership.
	Campaign(ctx context.Context, value string) (term int64, err error)
	// Resign ends the candidate's leadership, handing it to the next.
	Resign(ctx context.Context) error
}

type latchkeyElector struct{ e *election.Election }

func (l latchkeyElector) Campaign(ctx context.Context, value string) (int64, error) {
	if _, err := l.e.Campaign(ctx, value); err != nil {
		return 0, err
	}
	return l.e.Term(), nil
}

func (l latchkeyElector) Resign(ctx context.Context) error { return l.e.Resign(ctx) }

type etcdElector struct{ e *concurrency.Election }

func (e etcdElector) Campaign(ctx context.Context, value string) (int64, error) {
	if err := e.e.Campaign(ctx, value); err != nil {
		return 0, err
	}
	return e.e.Rev(), nil
}

func (e etcdElector) Resign(ctx context.Context) error { return e.e.Resign(ctx) }
