package process

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

// TTL is how long a record lives after its last write: how long it may
// outlive its process. Refresh is how often a client rewrites it; a TTL
// of five refreshes rides out four lost writes (a failover, a restart)
// before the record lapses, and the next write after that restores it.
// One SET a minute per client is a sixth of what the watchdog sends for
// one lock it keeps (a renewal every 10s).
const (
	TTL     = 5 * time.Minute
	Refresh = time.Minute
)

// writeTimeout bounds one write; the client's own timeouts apply too.
const writeTimeout = 5 * time.Second

// timing is the TTL and refresh period a writer takes when it is made;
// tests shorten them (see export_test.go).
var timing = struct {
	sync.Mutex
	ttl, every time.Duration
}{ttl: TTL, every: Refresh}

// writers is each client's writer, in the client's runtime
// (internal/perclient): latchkey.Close stops it.
var writers = perclient.Declare(newWriter, (*writer).close)

// A writer keeps this process's record on one client's servers.
type writer struct {
	client     redis.UniversalClient
	key, value string
	ttl, every time.Duration
	ctx        context.Context // ends with close
	cancel     context.CancelFunc

	// settled is set once Start has nothing to do: a write is scheduled,
	// the record is off, or the server refused it. Start reads it alone.
	settled atomic.Bool

	mu      sync.Mutex
	off     bool   // SetEnabled(false)
	refused error  // the server's refusal of a write: never write again
	gen     uint64 // bumped to end the running chain of writes
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup // the write under way, if any
}

func newWriter(c redis.UniversalClient) *writer {
	timing.Lock()
	ttl, every := timing.ttl, timing.every
	timing.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	return &writer{client: c, key: keys.ProcessRecord(owner.Process()), value: value(),
		ttl: ttl, every: every, ctx: ctx, cancel: cancel}
}

// Start writes this process's record through c in the background, the
// first time it is called for c, and keeps rewriting it every refresh
// period until latchkey.Close; later calls do nothing. It never waits for
// the write, nor reports its errors: internal/scripts calls it after
// each write it runs for c, so that the record is written on the
// client's first use whatever the primitive.
func Start(c redis.UniversalClient) {
	w := writers.Get(c)
	if w.settled.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.off && w.refused == nil && !w.closed && w.timer == nil {
		w.schedule(0)
	}
	w.settled.Store(true)
}

// SetEnabled turns the record of this process on c off or back on. Off
// before c's first use, nothing is written; off later, no write is sent
// after the one under way, if any, and the record lapses with its TTL.
// Back on, the next call writes again.
func SetEnabled(c redis.UniversalClient, on bool) {
	w := writers.Get(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.off == !on {
		return
	}
	w.off = !on
	if w.off {
		w.stop()
		w.settled.Store(true)
	} else {
		w.settled.Store(false)
	}
}

// schedule runs a write of the current chain in d. w.mu is held.
func (w *writer) schedule(d time.Duration) {
	gen := w.gen
	w.running.Add(1)
	w.timer = time.AfterFunc(d, func() {
		defer w.running.Done()
		w.tick(gen)
	})
}

// stop ends the chain of writes: the timer, if it has not fired, and the
// write it started, if it has, which schedules none. w.mu is held.
func (w *writer) stop() {
	w.gen++
	if w.timer != nil && w.timer.Stop() {
		w.running.Done()
	}
	w.timer = nil
}

// tick writes the record, if the chain gen still runs, and schedules the
// next write unless the server refused this one.
func (w *writer) tick(gen uint64) {
	w.mu.Lock()
	if gen != w.gen {
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	err := w.write()
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen {
		return
	}
	if final(err) {
		w.refused, w.timer = err, nil
		return
	}
	w.schedule(w.every)
}

// write sets the record with its TTL: one command, so a reader finds the
// record whole or not at all.
func (w *writer) write() error {
	ctx, cancel := context.WithTimeout(w.ctx, writeTimeout)
	defer cancel()
	return w.client.Set(ctx, w.key, w.value, w.ttl).Err()
}

// final reports whether err says that no later write can succeed: the
// user may not write the key (NOPERM: an ACL without
// ~latchkey_process:*), the server is a read-only replica, or the client
// was closed. Any other error (the network, a failover) may pass, and the
// next refresh tries again.
func final(err error) bool {
	return err != nil && (redis.IsPermissionError(err) || redis.IsReadOnlyError(err) || errors.Is(err, redis.ErrClosed))
}

// close stops the writes and waits for the one under way, which the
// cancelled context cuts short. The record stays until its TTL: it still
// names the holder of a lock that outlives the client.
func (w *writer) close() error {
	w.mu.Lock()
	w.closed = true
	w.stop()
	w.cancel()
	w.mu.Unlock()
	w.running.Wait()
	return nil
}
