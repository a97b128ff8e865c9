package rwlock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// markerOf is the writers' marker beside Redisson's keys.
func markerOf(name string) string { return "latchkey_rwlock_writers:{" + name + "}" }

// A backend gives a test clients of one server, each as a separate process
// would have one.
type backend struct {
	name   string
	client func(t *testing.T) *redis.Client
}

// backends returns the shared real redis-server (skipped without one, as
// server does) and a miniredis of the test's own.
func backends() []backend {
	return []backend{
		{"redis", func(t *testing.T) *redis.Client { return client(t, server(t)) }},
		{"miniredis", nil},
	}
}

// forEachBackend runs f on each backend as a subtest.
func forEachBackend(t *testing.T, f func(t *testing.T, newClient func() *redis.Client)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			if b.client != nil {
				f(t, func() *redis.Client { return b.client(t) })
				return
			}
			m, first := locktest.Mini(t)
			used := false
			f(t, func() *redis.Client {
				if !used {
					used = true
					return first
				}
				c := redis.NewClient(&redis.Options{Addr: m.Addr()})
				t.Cleanup(func() { _ = latchkey.Close(c); _ = c.Close() })
				return c
			})
		})
	}
}

// waitMarked waits until n writers are in the marker of name.
func waitMarked(t *testing.T, c *redis.Client, name string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.ZCard(context.Background(), markerOf(name)).Val() < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d writers marked waiting on %s", n, name)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Once a writer waits, a new reader of another owner waits behind it, while
// an owner that already reads re-enters at once (sync.RWMutex would
// deadlock there); the writer enters when the readers before it are out,
// and the reader behind it after its Unlock. Never a reader with a writer.
func TestRWMutex_writerPreference(t *testing.T) {
	forEachBackend(t, func(t *testing.T, newClient func() *redis.Client) {
		name := lockName(t)
		bg := context.Background()
		raw := newClient()
		first := rwlock.New(raw, name)
		owned := rwlock.New(newClient(), name)
		writer := rwlock.New(newClient(), name)
		late := rwlock.New(newClient(), name)
		octx := latchkey.WithOwner(bg)
		must(t, first.RLock(bg), owned.RLock(octx))

		var writing, reading = make(chan struct{}), make(chan struct{})
		wrote := make(chan error, 1)
		go func() {
			err := writer.Lock(bg)
			close(writing)
			if err == nil {
				select {
				case <-reading:
					err = errors.New("writer entered beside a reader")
				case <-time.After(50 * time.Millisecond):
				}
				if uerr := writer.Unlock(bg); err == nil {
					err = uerr
				}
			}
			wrote <- err
		}()
		waitMarked(t, raw, name, 1)

		if ok, err := late.TryRLock(bg, 100*time.Millisecond); ok || err != nil {
			t.Fatalf("a new reader while a writer waits: TryRLock = %v, %v; want false", ok, err)
		}
		if ok, err := owned.TryRLock(octx, 0); !ok || err != nil {
			t.Fatalf("re-entry of a reading owner while a writer waits: TryRLock = %v, %v; want true", ok, err)
		}
		if ok, err := owned.TryLock(octx, time.Second); ok || !errors.Is(err, latchkey.ErrWouldDeadlock) {
			t.Fatalf("the reading owner's Lock = %v, %v; want ErrWouldDeadlock", ok, err)
		}
		readErr := make(chan error, 1)
		go func() {
			err := late.RLock(bg)
			if err == nil {
				select {
				case <-writing:
				default:
					err = errors.New("a reader behind the writer entered before it")
				}
				close(reading)
				err = errors.Join(err, late.RUnlock(bg))
			}
			readErr <- err
		}()
		select {
		case <-writing:
			t.Fatal("writer entered beside readers")
		case <-time.After(50 * time.Millisecond):
		}
		must(t, first.RUnlock(bg), owned.RUnlock(octx), owned.RUnlock(octx))
		must(t, within(t, wrote, 5*time.Second, "writer after the readers"))
		must(t, within(t, readErr, 5*time.Second, "reader after the writer"))
		if n := raw.Exists(bg, markerOf(name), name).Val(); n != 0 {
			t.Fatalf("%d keys left of the lock and its marker", n)
		}
	})
}

// A writer that gives up takes its mark with it, and the readers it held
// back enter without waiting for the mark's deadline. A single TryLock
// leaves no mark; nor does a Lock refused with ErrWouldDeadlock.
func TestRWMutex_writerGivesUp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, newClient func() *redis.Client) {
		name := lockName(t)
		bg := context.Background()
		raw := newClient()
		reader := rwlock.New(raw, name)
		writer := rwlock.New(newClient(), name)
		late := rwlock.New(newClient(), name)
		must(t, reader.RLock(bg))

		if ok, err := writer.TryLock(bg, 0); ok || err != nil {
			t.Fatalf("TryLock(0) among readers = %v, %v", ok, err)
		}
		if n := raw.Exists(bg, markerOf(name)).Val(); n != 0 {
			t.Fatal("a single TryLock left a mark")
		}
		octx := latchkey.WithOwner(bg)
		must(t, late.RLock(octx))
		if err := late.Lock(octx); !errors.Is(err, latchkey.ErrWouldDeadlock) {
			t.Fatalf("Lock by a reading owner = %v, want ErrWouldDeadlock", err)
		}
		if n := raw.Exists(bg, markerOf(name)).Val(); n != 0 {
			t.Fatal("a Lock refused with ErrWouldDeadlock left a mark")
		}
		must(t, late.RUnlock(octx))

		gaveUp := make(chan error, 1)
		go func() {
			ok, err := writer.TryLock(bg, 300*time.Millisecond)
			if ok {
				err = errors.New("TryLock among readers succeeded")
			}
			gaveUp <- err
		}()
		waitMarked(t, raw, name, 1)
		entered := make(chan error, 1)
		go func() {
			err := late.RLock(bg)
			if err == nil {
				err = late.RUnlock(bg)
			}
			entered <- err
		}()
		must(t, within(t, gaveUp, 5*time.Second, "writer giving up"))
		start := time.Now()
		if n := raw.Exists(bg, markerOf(name)).Val(); n != 0 {
			t.Fatal("a writer that gave up left its mark")
		}
		must(t, within(t, entered, 5*time.Second, "reader after the writer gave up"))
		t.Logf("the held-back reader entered %v after the writer gave up", time.Since(start))
		must(t, reader.RUnlock(bg))
	})
}

// With readers' holds overlapping so that the lock is never free, a writer
// still gets in: the readers that come after it wait. Readers with an owner
// re-enter while the writer waits, and nobody deadlocks.
func TestRWMutex_writerNotStarved(t *testing.T) {
	s := server(t)
	name := lockName(t)
	const readers, writes = 6, 5
	var rws []*rwlock.RWMutex
	for range 3 {
		rws = append(rws, rwlock.New(client(t, s), name))
	}
	writer := rwlock.New(client(t, s), name)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	stop := make(chan struct{})
	readErr := make(chan error, readers)
	var inside gauge
	for g := range readers {
		go func() {
			rw := rws[g%len(rws)]
			for {
				select {
				case <-stop:
					readErr <- nil
					return
				default:
				}
				rctx, depth := ctx, 1
				if g%2 == 0 {
					rctx, depth = latchkey.WithOwner(ctx), 2 // re-enters mid-hold
				}
				for i := range depth {
					if err := rw.RLock(rctx); err != nil {
						readErr <- err
						return
					}
					if i == 0 {
						inside.read(1)
					}
					time.Sleep(time.Duration(3+g) * time.Millisecond)
				}
				inside.read(-1)
				for range depth {
					if err := rw.RUnlock(rctx); err != nil {
						readErr <- err
						return
					}
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // the readers overlap
	for range writes {
		if err := writer.Lock(ctx); err != nil {
			t.Fatalf("writer among overlapping readers: %v", err)
		}
		inside.write(1)
		time.Sleep(2 * time.Millisecond)
		inside.write(-1)
		must(t, writer.Unlock(ctx))
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	for range readers {
		must(t, within(t, readErr, 10*time.Second, "reader stopping"))
	}
	if v := inside.violations.Load(); v != 0 {
		t.Fatalf("%d times a writer was inside with someone else", v)
	}
}

// A gauge counts who is inside: readers, and a writer as 1<<32. Entering
// beside a writer, or as a writer beside anyone, is a violation.
type gauge struct{ v, violations atomic.Int64 }

func (g *gauge) read(d int64) {
	if v := g.v.Add(d); d > 0 && v>>32 != 0 {
		g.violations.Add(1)
	}
}

func (g *gauge) write(d int64) {
	if v := g.v.Add(d << 32); d > 0 && v != 1<<32 {
		g.violations.Add(1)
	}
}
