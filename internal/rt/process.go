package rt

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// The writer of the process record (see keys.Process): it writes the
// record in the background, never on a call's path. The end of a
// client's first write (the send path calls start after each) fires the
// first write, and a timer rewrites it every keys.ProcessRefresh, with a
// TTL of keys.ProcessTTL, until Close.

// writeTimeout bounds one write; the client's own timeouts apply too.
const writeTimeout = 5 * time.Second

// timing is the TTL and refresh period a writer takes when it is made;
// tests shorten them (see export_test.go).
var timing = struct {
	sync.Mutex
	ttl, every time.Duration
}{ttl: keys.ProcessTTL, every: keys.ProcessRefresh}

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
	return &writer{client: c, key: keys.ProcessRecord(owner.Process()), value: keys.SelfJSON(),
		ttl: ttl, every: every, ctx: ctx, cancel: cancel}
}

// start writes this process's record through the client in the
// background, the first time it is called, and keeps rewriting it every
// refresh period until Close; later calls do nothing. It never waits for
// the write, nor reports its errors: the send path calls it after each
// write it runs, so that the record is written on the client's first use
// whatever the primitive.
func (w *writer) start() {
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

// setEnabled turns the record off or back on. Off before the client's
// first use, nothing is written; off later, no write is sent after the
// one under way, if any, and the record lapses with its TTL. Back on, the
// next call writes again.
func (w *writer) setEnabled(on bool) {
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
