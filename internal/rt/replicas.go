package rt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// replicaRecheck is how old a master's replica count may grow before it is
// read again: a replica that attaches is waited for by the writes sent
// about a second after it is online. The first write that finds the count
// old reads INFO along with its script, in its own round trip (see
// recount); a count by WAIT, which blocks, is read in the background.
const replicaRecheck = time.Second

// infoTimeout bounds one INFO replication call.
const infoTimeout = 2 * time.Second

// waitProbe is how long a count by WAIT waits for one more replica to
// acknowledge (see replicasByWait).
const waitProbe = 50 * time.Millisecond

// silentReplica is how long a replica counted by WAIT stays counted once it
// stops acknowledging: Redis's default repl-timeout, after which a master
// drops a silent replica from what INFO lists.
const silentReplica = 60 * time.Second

// newServerCache returns what the runner learns of a client's servers.
func newServerCache() *serverCache {
	return &serverCache{masters: make(map[*redis.Client]*replicaCount), infoDenied: make(map[*redis.Client]bool)}
}

// A serverCache holds, per master, how many replicas it has online, as
// INFO replication says (Redisson caches the same), the nodes whose user
// may not run INFO.
type serverCache struct {
	mu         sync.Mutex
	masters    map[*redis.Client]*replicaCount
	infoDenied map[*redis.Client]bool
}

type replicaCount struct {
	ready   chan struct{} // closed once the first read is done
	n       int           // online replicas
	at      time.Time     // when n was read; zero if the read failed
	reading bool          // a read is under way in the background
	noWait  bool          // the server rejected WAIT

	peak   int       // the most replicas a count by WAIT saw lately
	peakAt time.Time // when peak was last seen
}

// set records a count read at now. A count by WAIT sees only the replicas
// that answer it; one that answered within silentReplica stays counted,
// as INFO keeps listing a silent replica until the master's repl-timeout,
// so that a replica that stops answering fails synced writes rather than
// leaving them unsynced.
func (rc *replicaCount) set(n int, byWait bool, now time.Time) {
	rc.at = now
	if byWait {
		if n >= rc.peak || now.Sub(rc.peakAt) > silentReplica {
			rc.peak, rc.peakAt = n, now
		}
		n = rc.peak
	}
	rc.n = n
}

// masterFor returns the client of the master that owns key: the client
// itself unless it is a cluster client.
func masterFor(ctx context.Context, client redis.UniversalClient, key string) (*redis.Client, error) {
	switch c := client.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	}
	return nil, errors.New("latchkey: replica sync needs a *redis.Client or *redis.ClusterClient")
}

// A recount is a replica count that a write reads again, with INFO
// replication sent along its script; done must be called with INFO's
// answer.
type recount struct {
	sc *serverCache
	rc *replicaCount
}

// done records the count that INFO answered and returns it; after an
// error, the count stands, and the next write reads it again.
func (r *recount) done(info string, err error) int {
	r.sc.mu.Lock()
	defer r.sc.mu.Unlock()
	r.rc.reading = false
	if err == nil {
		r.rc.set(onlineReplicas(info), false, time.Now())
	}
	return r.rc.n
}

// replicasOf returns how many replicas node has online, reading INFO the
// first time. Once the count is old (replicaRecheck), one write reads it
// again: replicasOf then returns a recount for it. The error is that of
// a first read that could not reach node: the write would fail the same
// way, so it is not sent.
func replicasOf(ctx context.Context, client redis.UniversalClient, node *redis.Client) (int, *recount, error) {
	sc := Of(client).replicas
	sc.mu.Lock()
	rc := sc.masters[node]
	if rc == nil {
		rc = &replicaCount{ready: make(chan struct{})}
		sc.masters[node] = rc
		sc.mu.Unlock()
		n, byWait, err := sc.readReplicas(ctx, node)
		sc.mu.Lock()
		if err == nil {
			rc.set(n, byWait, time.Now())
		} // else at zero: read again in the background by the next write
		failed := flight.Network(err) || errors.Is(err, ErrReplicasUnknown)
		if failed {
			delete(sc.masters, node) // read again by the next write
		}
		close(rc.ready)
		sc.mu.Unlock()
		if failed {
			return 0, nil, err
		}
		return n, nil, nil
	}
	ready := rc.ready
	sc.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return 0, nil, nil // the write fails on ctx anyway
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if rc.noWait {
		return 0, nil, nil
	}
	if rc.reading || time.Since(rc.at) <= replicaRecheck {
		return rc.n, nil, nil
	}
	rc.reading = true
	if sc.infoDenied[node] {
		go sc.refresh(rc, node)
		return rc.n, nil, nil
	}
	return rc.n, &recount{sc, rc}, nil
}

// recheck has the next write to node read its replica count again: WAIT
// answered a number other than the cached one.
func recheck(client redis.UniversalClient, node *redis.Client) {
	sc := Of(client).replicas
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if rc := sc.masters[node]; rc != nil {
		rc.at = time.Time{}
	}
}

func (sc *serverCache) refresh(rc *replicaCount, node *redis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), infoTimeout)
	defer cancel()
	n, byWait, err := sc.readReplicas(ctx, node)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	rc.reading = false
	if err == nil {
		rc.set(n, byWait, time.Now())
	}
}

// noWait records that node rejects WAIT (some managed services do), so
// writes to it are not synced.
func noWait(client redis.UniversalClient, node *redis.Client) {
	sc := Of(client).replicas
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if rc := sc.masters[node]; rc != nil {
		rc.noWait = true
	}
}

// readReplicas returns the number of replicas INFO replication lists as
// online. A user that may not run INFO (a least-privilege user set up by
// ACL categories: INFO is in @dangerous) has them counted by WAIT instead
// (see replicasByWait), and byWait says so; one that may run neither gets
// an error that says what to grant, so that replica sync never turns
// itself off in silence.
func (sc *serverCache) readReplicas(ctx context.Context, node *redis.Client) (n int, byWait bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	sc.mu.Lock()
	noInfo := sc.infoDenied[node]
	sc.mu.Unlock()
	if noInfo {
		n, err := replicasByWait(ctx, node)
		return n, true, err
	}
	info, err := node.Info(ctx, "replication").Result()
	if denied(err) {
		sc.mu.Lock()
		sc.infoDenied[node] = true // not asked again: each refusal is logged
		sc.mu.Unlock()
		n, err := replicasByWait(ctx, node)
		return n, true, err
	}
	if err != nil {
		return 0, false, err
	}
	return onlineReplicas(info), false, nil
}

// onlineReplicas returns the number of replicas that INFO replication's
// answer info lists as online.
func onlineReplicas(info string) (n int) {
	for _, line := range strings.Split(info, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.HasPrefix(key, "slave") && key != "slave_read_only" && strings.Contains(val, "state=online") {
			if _, err := strconv.Atoi(key[len("slave"):]); err == nil {
				n++
			}
		}
	}
	return n
}

// replicasByWait counts the replicas of node that acknowledge, with WAIT
// on a connection of its own (WAIT is in @connection, which a
// least-privilege user has). WAIT answers how many replicas acknowledged
// the connection's offset. On Redis 7.0 that offset is the master's as of
// the connection's last command, even one that wrote nothing, and a
// replica's answer to the master's GETACK leaves out the GETACK itself, so
// that right after anyone's WAIT a live replica looks behind until its
// next acknowledgement (once a second).
// WAIT 0 0 answers at once with those in step; each WAIT for one more
// makes the master ask every replica, and waits up to waitProbe for one
// more to answer.
func replicasByWait(ctx context.Context, node *redis.Client) (int, error) {
	o := node.Options()
	c := redis.NewClient(&redis.Options{
		Addr: o.Addr, Network: o.Network, Dialer: o.Dialer, TLSConfig: o.TLSConfig,
		Username: o.Username, Password: o.Password, CredentialsProvider: o.CredentialsProvider,
		Protocol: o.Protocol, DB: o.DB, PoolSize: 1, MaxRetries: o.MaxRetries,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
	})
	defer c.Close()
	n, err := c.Do(ctx, "WAIT", 0, 0).Int()
	if denied(err) {
		return 0, fmt.Errorf("%w: replica sync cannot tell whether %s has replicas, since this user may run neither INFO nor WAIT: grant it +info or +wait, or turn replica sync off with WithReplicaSync(0)", ErrReplicasUnknown, o.Addr)
	}
	for err == nil {
		var more int
		more, err = c.Do(ctx, "WAIT", n+1, waitProbe.Milliseconds()).Int()
		if err != nil || more <= n {
			break
		}
		n = more
	}
	return n, err
}

// ErrReplicasUnknown: the replicas of a master cannot be counted with the
// user's permissions (see readReplicas).
var ErrReplicasUnknown = errors.New("latchkey: replicas unknown")

// denied reports an ACL refusal.
func denied(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOPERM")
}
