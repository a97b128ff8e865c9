package rt

import (
	"context"
	"net"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
)

// A Sentinel failover client's connections move to the new master after a
// failover, but nothing breaks the Hub's connection to the old one, which
// stays up as a replica: restarts cannot notice the change there. So,
// while such a client holds anything, a PING a second makes its pool dial
// the new master soon after a failover, and a dial to another address than
// the last has the watchdog recheck every hold. A client of a fixed
// address, or a cluster's, needs neither.

// failoverAddr is the Addr that go-redis gives a Sentinel failover
// client's options.
const failoverAddr = "FailoverClient"

// probeEvery is how often a Sentinel client that holds something pings.
const probeEvery = time.Second

// hooked holds the Sentinel clients whose dials are watched: a hook is
// added once per client, for its life, since go-redis cannot remove one.
// Its keys are weak, so that a client dropped by its user is collected
// (and its entry dropped), as latchkey.Close promises.
var hooked sync.Map // weak.Pointer[redis.Client] -> true

// isFailover reports whether c is a Sentinel failover client.
func isFailover(c redis.UniversalClient) bool {
	rc, ok := c.(*redis.Client)
	return ok && rc.Options().Addr == failoverAddr
}

// watchDials has the dials of c, a Sentinel failover client, tell the
// watchdog of r, c's runtime, when the master's address changed.
func watchDials(r *Runtime, c redis.UniversalClient) {
	if !isFailover(c) {
		return
	}
	rc := c.(*redis.Client)
	key := weak.Make(rc)
	if _, loaded := hooked.LoadOrStore(key, true); loaded {
		return
	}
	runtime.AddCleanup(rc, func(k weak.Pointer[redis.Client]) { hooked.Delete(k) }, key)
	rc.AddHook(&dials{client: c})
}

// dials is the hook that watches a Sentinel client's dials.
type dials struct {
	client redis.UniversalClient
	mu     sync.Mutex
	last   string
}

func (d *dials) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			// addr is the options' placeholder: the dialer asked the
			// sentinels, and the connection says where it went.
			at := conn.RemoteAddr().String()
			d.mu.Lock()
			moved := d.last != "" && d.last != at
			d.last = at
			d.mu.Unlock()
			if s := peek(d.client).peekWatchdog(); s != nil && moved {
				go s.Recheck() // not on the dial's path
			}
		}
		return conn, err
	}
}

func (d *dials) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d *dials) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// probe pings c, a Sentinel failover client, every probeEvery until stop
// is closed (see above).
func probe(c redis.UniversalClient, stop <-chan struct{}) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), probeEvery)
			_ = c.Ping(ctx).Err()
			cancel()
		case <-stop:
			return
		}
	}
}
