// Package rt is latchkey's runtime for each go-redis client of the process:
// one Runtime per client, made on first use, holding everything latchkey
// keeps for that client, and the one send path every script goes through.
//
// A Runtime owns, as plain fields: the Hub that the client's waiters
// listen through, which settles once whether scripts publish with PUBLISH
// or SPUBLISH; the watchdog that renews the client's holds, with the
// watch for its servers' restarts; the request-record book; the batches
// of looks that can wait a moment (see Look); the replica
// counts of the client's masters; the writer of the process record; and
// what users set per client, the ride-out, polling and the hooks' sink.
// Close lets go of all of it at once; a later use starts afresh.
package rt

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Runtime is what latchkey keeps for one go-redis client.
type Runtime struct {
	client   redis.UniversalClient
	records  *recordBook
	replicas *serverCache
	process  *writer
	parked   *Book
	looks    looks

	rideOut atomic.Int64 // 0: DefaultRideOut
	polling atomic.Bool
	sink    atomic.Pointer[Sink]

	mu       sync.Mutex
	hub      *notify.Hub
	watchdog *lease.Scheduler
	closed   bool
}

var (
	all sync.Map   // redis.UniversalClient -> *Runtime
	mu  sync.Mutex // serializes the making of Runtimes
)

// Of returns client's Runtime, making it on first use: one lookup, which
// takes no lock once it is made.
func Of(client redis.UniversalClient) *Runtime {
	if r, ok := all.Load(client); ok {
		return r.(*Runtime)
	}
	mu.Lock()
	defer mu.Unlock()
	if r, ok := all.Load(client); ok {
		return r.(*Runtime)
	}
	r := &Runtime{client: client, records: newRecordBook(client), replicas: newServerCache(), process: newWriter(client), parked: newBook(),
		looks: looks{client: client}}
	all.Store(client, r)
	return r
}

// peek returns client's Runtime if it was made, making nothing.
func peek(client redis.UniversalClient) *Runtime {
	if client == nil {
		return nil
	}
	if r, ok := all.Load(client); ok {
		return r.(*Runtime)
	}
	return nil
}

// Client returns the client the Runtime is for.
func (r *Runtime) Client() redis.UniversalClient { return r.client }

// Hub returns the Hub shared by every primitive of this process that uses
// the client and was given no Hub of its own. Its connection is made on
// first use, and closes when idle.
func (r *Runtime) Hub() *notify.Hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hub == nil {
		r.hub = notify.New(r.client)
	}
	return r.hub
}

// Watchdog returns the scheduler that renews the client's holds, which has
// the Hub watch their servers for a return (see restarts).
func (r *Runtime) Watchdog() *lease.Scheduler {
	r.mu.Lock()
	if r.watchdog != nil {
		defer r.mu.Unlock()
		return r.watchdog
	}
	r.mu.Unlock()
	hub := r.Hub()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watchdog == nil {
		s := lease.New(r.client, r.renew)
		if r.closed {
			s.Close() // holds added now are declared lost at once
		} else {
			s.SetWatcher(newRestarts(r.client, hub, s.Recheck))
			watchDials(r, r.client)
		}
		r.watchdog = s
	}
	return r.watchdog
}

// peekWatchdog returns the watchdog if it was made.
func (r *Runtime) peekWatchdog() *lease.Scheduler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watchdog
}

// Close lets go of the runtime of client: the permits its semaphore
// waiters that gave up may hold are handed back, and its purges due after
// its grants run (see Book), waiting for them at most closeWait; the
// process record is no longer rewritten, the holds the watchdog renewed are declared lost (they
// expire with their lease, as when a Redisson client shuts down), waiters
// on the shared Hub return an error matching ErrClosed, and the answered
// request records waiting for their batch are deleted. A later use starts
// afresh.
func Close(client redis.UniversalClient) error {
	v, ok := all.Load(client)
	if !ok {
		return nil
	}
	r := v.(*Runtime)
	// The Book's requests use the rest of the runtime, which must still
	// be there: were they sent after it went, they would make it again.
	_ = r.parked.close()
	if !all.CompareAndDelete(client, r) {
		return nil // closed meanwhile
	}
	r.mu.Lock()
	r.closed = true
	hub, watchdog := r.hub, r.watchdog
	r.mu.Unlock()
	var errs []error
	errs = append(errs, r.process.close())
	if watchdog != nil {
		watchdog.Close()
	}
	if hub != nil {
		errs = append(errs, hub.Close())
	}
	errs = append(errs, r.records.close())
	return errors.Join(errs...)
}

// DefaultRideOut is how long a call rides out an outage unless its client
// says otherwise: long enough for a Redis Cluster failover with a 15s node
// timeout and an election, or a restart of a server with a small data set.
const DefaultRideOut = 30 * time.Second

// SetRideOut makes d the ride-out of client's calls; d <= 0 restores the
// default (see latchkey.SetRideOut).
func SetRideOut(client redis.UniversalClient, d time.Duration) {
	Of(client).rideOut.Store(int64(max(d, 0)))
}

// RideOut returns how long client's calls ride out an outage.
func RideOut(client redis.UniversalClient) time.Duration {
	if r := peek(client); r != nil {
		if d := r.rideOut.Load(); d > 0 {
			return time.Duration(d)
		}
	}
	return DefaultRideOut
}

// SetPolling makes client's waiters wait by polling instead of through
// pub/sub, or through pub/sub again (see latchkey.SetPolling).
func SetPolling(client redis.UniversalClient, on bool) { Of(client).polling.Store(on) }

// Polling reports whether client's waiters poll: whether client's calls
// must never subscribe.
func Polling(client redis.UniversalClient) bool {
	r := peek(client)
	return r != nil && r.polling.Load()
}

// SetProcessRecord turns the record of this process on client off or back
// on (see latchkey.SetProcessRecord).
func SetProcessRecord(client redis.UniversalClient, on bool) { Of(client).process.setEnabled(on) }

// renew runs a renewal script for the watchdog (a lease.Send).
func (r *Runtime) renew(ctx context.Context, script string, keys []string, args []any, sync time.Duration) ([]int64, error) {
	rep := r.Sender(nil, sync).Send(ctx, scripts.Renewal(scripts.Get(script), keys, args))
	res, err := rep.Int64Slice()
	if err == nil {
		err = rep.SyncErr()
	}
	return res, err
}

// Publish returns the command the scripts publish with, PUBLISH or
// SPUBLISH: that of h, the Hub a primitive waits through, or of client's
// shared Hub when h is nil, so that publishers and waiters agree. A Hub
// settles its mode once, on first use.
func Publish(ctx context.Context, client redis.UniversalClient, h *notify.Hub) (string, error) {
	if h == nil {
		h = Of(client).Hub()
	}
	return h.PublishCommand(ctx)
}

// Renewals returns client's send path for renewal scripts, for a watchdog
// of one's own (tests of package lease).
func Renewals(client redis.UniversalClient) lease.Send { return Of(client).renew }
