package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Env is what a scenario needs from the suite: where the servers are and
// how to reach them.
type Env struct {
	Addr     string   // the main server; "" in a cluster's Env
	Cluster  []string // the masters of a cluster's Env
	Nodes    []string // independent masters for scenarios that span several
	Mini     bool
	Control  *redis.Client   // INFO and PING probes; never used by workers
	Controls []*redis.Client // every Redis a run may touch (Control first): INFO is summed over them
	Peers    map[*Peer]*peerProc
	// ClusterEnv is the Redis Cluster that Cluster scenarios run on, nil
	// when none could be started.
	ClusterEnv *Env
	// CallgrindEnv is the redis-server under callgrind that Callgrind
	// scenarios run on, nil when none could be started; in it, Callgrind
	// is that server.
	CallgrindEnv *Env
	Callgrind    *callgrindServer
	// InstrOps is how many operations a Callgrind scenario measures per
	// window; InstrDumps, if set, the directory where it keeps each
	// window's callgrind profile.
	InstrOps   int
	InstrDumps string
	// options, if set, adjusts the options of the workers' clients on
	// the main server.
	options func(*redis.Options)
	Ops     *atomic.Int64 // acquisitions so far, for the progress line
	seq     *atomic.Int64

	// Rounds is the invocation's, and Round (from 1) the one running: a
	// scenario that counts its trials spreads them over the rounds.
	Rounds, Round int
}

func newEnv() *Env {
	return &Env{Ops: new(atomic.Int64), seq: new(atomic.Int64), Peers: map[*Peer]*peerProc{}}
}

// clusterEnv returns the Env of a cluster whose masters are addrs and
// whose masters' own clients are controls, sharing e's counters.
func (e *Env) clusterEnv(addrs []string, controls []*redis.Client) *Env {
	return &Env{Cluster: addrs, Control: controls[0], Controls: controls, Peers: e.Peers, Ops: e.Ops, seq: e.seq}
}

// callgrindEnv returns the Env of the redis-server under callgrind s,
// whose own client is control, sharing e's counters.
func (e *Env) callgrindEnv(s *callgrindServer, control *redis.Client) *Env {
	return &Env{Addr: s.Addr, Control: control, Controls: []*redis.Client{control}, Callgrind: s,
		Peers: e.Peers, Ops: e.Ops, seq: e.seq, options: callgrindOptions}
}

// Name returns a key name no earlier run used, in its own hash slot.
func (e *Env) Name(scenario, impl string) string {
	return fmt.Sprintf("bench:{%s:%s:%d}", scenario, impl, e.seq.Add(1))
}

// Clients is the workers' connections, whose sent commands are counted.
type Clients struct {
	List []*Conn
	im   *Impl
	sent atomic.Int64 // round trips: a command through Process, a pipeline, a request to a peer
	ping atomic.Int64 // of which PINGs
	// seq0 is the last name drawn before the run's clients were made: the
	// run's names come after it (records.go).
	seq0 int64
}

// NewClients returns n Conns for im's workers, one per worker as n
// processes would have: a client on the main server (a cluster client in a
// cluster's Env), clients on the independent masters if nodes is set, and a
// connection to im's peer if it has one. Every client is connected and
// warmed up with a PING (not counted).
func (e *Env) NewClients(ctx context.Context, im *Impl, n int, nodes bool) (*Clients, error) {
	cs := &Clients{im: im, seq0: e.seq.Load()}
	for range n {
		conn := &Conn{}
		cs.List = append(cs.List, conn)
		var err error
		if conn.Client, err = e.dial(ctx, cs); err != nil {
			cs.Close()
			return nil, err
		}
		for _, addr := range e.Nodes {
			if !nodes {
				break
			}
			nc := redis.NewClient(&redis.Options{Addr: addr})
			conn.Nodes = append(conn.Nodes, nc)
			if err := nc.Ping(ctx).Err(); err != nil {
				cs.Close()
				return nil, err
			}
			nc.AddHook(counter{cs})
		}
		if im.Peer != nil {
			if conn.Peer, err = e.dialPeer(ctx, im.Peer, cs, conn); err != nil {
				cs.Close()
				return nil, err
			}
		}
	}
	return cs, nil
}

// dial returns a client on e's main server or cluster, connected (to every
// master of a cluster) and hooked.
func (e *Env) dial(ctx context.Context, cs *Clients) (redis.UniversalClient, error) {
	if len(e.Cluster) > 0 {
		// Hooked per node, as a library may send through a node's client
		// (MasterForKey) and the cluster's hooks would not see it.
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: e.Cluster})
		cc.OnNewNode(func(c *redis.Client) { c.AddHook(counter{cs}) })
		err := cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
		if err != nil {
			_ = cc.Close()
			return nil, err
		}
		return cc, nil
	}
	o := &redis.Options{Addr: e.Addr}
	if e.options != nil {
		e.options(o)
	}
	c := redis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, err
	}
	c.AddHook(counter{cs})
	return c, nil
}

func (e *Env) dialPeer(ctx context.Context, p *Peer, cs *Clients, conn *Conn) (any, error) {
	pp := e.Peers[p]
	if pp == nil {
		return nil, fmt.Errorf("%s is not running", p.Name)
	}
	pc, closer, err := p.Dial(ctx, pp.Addr, &cs.sent)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	conn.OnClose(closer)
	return pc, nil
}

// Close runs the impl's Close on every Conn, if it has one, then what was
// registered with OnClose, newest first, then closes the clients.
func (cs *Clients) Close() {
	for _, c := range cs.List {
		if cs.im != nil && cs.im.Close != nil && c.Client != nil {
			cs.im.Close(c)
		}
		for i := len(c.closers) - 1; i >= 0; i-- {
			c.closers[i]()
		}
		if c.Client != nil {
			_ = c.Client.Close()
		}
		for _, n := range c.Nodes {
			_ = n.Close()
		}
	}
}

// counter counts the commands a worker client sends. Pub/sub connections
// bypass hooks: their commands are taken from commandstats (see meter).
type counter struct{ cs *Clients }

func (h counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch name := cmd.Name(); {
		case setupCommands[name]:
		case name == "ping":
			h.cs.ping.Add(1)
			h.cs.sent.Add(1)
		default:
			h.cs.sent.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(eachARequestKey{}) != nil {
			h.cs.sent.Add(int64(len(cmds)))
		} else {
			h.cs.sent.Add(1) // one round trip, whatever it carries
		}
		for _, c := range cmds {
			if c.Name() == "ping" {
				h.cs.ping.Add(1) // a hooked PING, not one of pub/sub's
			}
		}
		return next(ctx, cmds)
	}
}

// eachARequestKey marks a pipeline that stands for requests a client
// sends one by one without waiting for their answers (Redisson's latch
// DELs): each counts as a round trip, as it would be sent.
type eachARequestKey struct{}

func eachARequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, eachARequestKey{}, true)
}

// pings measures n PING round trips on c.
func pings(ctx context.Context, c *redis.Client, n int) []time.Duration {
	var out []time.Duration
	for range n {
		t := time.Now()
		if c.Ping(ctx).Err() == nil {
			out = append(out, time.Since(t))
		}
	}
	return out
}

// pinger measures a PING round trip on c every interval until ctx ends,
// declaring each to m, and returns them.
func pinger(ctx context.Context, c *redis.Client, every time.Duration, m *meter) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var ds []time.Duration
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				out <- ds
				return
			case <-t.C:
			}
			start := time.Now()
			m.probe(1)
			if c.Ping(ctx).Err() == nil {
				ds = append(ds, time.Since(start))
			}
		}
	}()
	return out
}
