package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// tokenKey is the write holds' fencing counter, latchkey's own key.
func tokenKey(name string) string { return "latchkey_rwlock_token:{" + name + "}" }

// onBoth runs f with a maker of clients of miniredis, then of the shared
// real server (skipped, or failed under CI, when none is installed).
func onBoth(t *testing.T, f func(t *testing.T, newClient func() *redis.Client)) {
	t.Run("miniredis", func(t *testing.T) {
		mr, _ := redistest.Miniredis(t)
		f(t, func() *redis.Client {
			c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = latchkey.Close(c); _ = c.Close() })
			return c
		})
	})
	t.Run("redis", func(t *testing.T) {
		s := server(t)
		f(t, func() *redis.Client { return client(t, s) })
	})
}

// Writers on three clients, two handles each, take the write lock in
// turns while readers come and go. Each writer finds its token above the
// last one a writer saw while it held, and records its own: the tokens
// strictly increase in acquisition order. Some writers re-enter, which
// draws the next token too, and some downgrade, reading under their write
// hold, which keeps its token. A handle that holds no write lock has
// token 0.
func TestWriteLock_Token_concurrent(t *testing.T) {
	onBoth(t, func(t *testing.T, newClient func() *redis.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		name := lockName(t)
		const writers, readers, rounds = 6, 3, 4
		var (
			f    fence
			errs = make(chan error, writers+readers)
			cs   = []*redis.Client{newClient(), newClient(), newClient()}
		)
		for i := range writers + readers {
			rw := rwlock.New(cs[i%len(cs)], name)
			if i < writers {
				go func() { errs <- f.write(ctx, rw, i%2 == 0, rounds) }()
			} else {
				go func() { errs <- read(ctx, rw, rounds) }()
			}
		}
		for range writers + readers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if n := f.seen.Load(); n < writers*rounds {
			t.Fatalf("%d write tokens seen, want at least %d", n, writers*rounds)
		}
		if n, err := cs[0].Get(ctx, tokenKey(name)).Int64(); err != nil || n != f.last.Load() {
			t.Errorf("counter %d (%v) after the last acquisition's token %d", n, err, f.last.Load())
		}
	})
}

// A fence is what a store that writers fence their writes to keeps: the
// last token it saw, and how many.
type fence struct{ last, seen atomic.Int64 }

// see records tok, seen under a write hold, which must be above the last.
func (f *fence) see(tok int64) error {
	if last := f.last.Load(); tok <= last {
		return fmt.Errorf("token %d after %d: not increasing", tok, last)
	}
	f.last.Store(tok)
	f.seen.Add(1)
	return nil
}

// write takes rw's write lock rounds times, its token seen by f while it
// holds; an owner re-enters, which must draw a greater token, and reads
// under its write hold, which must leave the write hold's token as it was.
func (f *fence) write(ctx context.Context, rw *rwlock.RWMutex, owned bool, rounds int) error {
	if owned {
		ctx = latchkey.WithOwner(ctx)
	}
	wl := rw.WriteLock()
	for range rounds {
		if err := wl.Lock(ctx); err != nil {
			return err
		}
		if err := f.see(wl.Token()); err != nil {
			return err
		}
		if owned {
			if err := wl.Lock(ctx); err != nil {
				return err
			}
			inner := wl.Token()
			if err := f.see(inner); err != nil {
				return fmt.Errorf("re-entry: %w", err)
			}
			if err := rw.RLock(ctx); err != nil {
				return err
			}
			if tok := wl.Token(); tok != inner {
				return fmt.Errorf("Token() = %d once the writer reads too, want its write hold's, %d", tok, inner)
			}
			if err := errors.Join(rw.RUnlock(ctx), wl.Unlock(ctx)); err != nil {
				return err
			}
		}
		if err := wl.Unlock(ctx); err != nil {
			return err
		}
		if tok := wl.Token(); tok != 0 {
			return fmt.Errorf("Token() = %d after the last write Unlock, want 0", tok)
		}
	}
	return nil
}

// read takes rw's read lock rounds times: a handle that only reads has no
// write token.
func read(ctx context.Context, rw *rwlock.RWMutex, rounds int) error {
	for range rounds {
		if err := rw.RLock(ctx); err != nil {
			return err
		}
		tok := rw.WriteLock().Token()
		if err := rw.RUnlock(ctx); err != nil {
			return err
		}
		if tok != 0 {
			return fmt.Errorf("a reader's WriteLock().Token() = %d, want 0", tok)
		}
	}
	return nil
}

// An owner's write re-entry draws the next token, as a mutex's does;
// Token reports the newest while any write hold is left. A downgrade
// (the writer reads, then releases its write hold) leaves a read hold,
// which has no token.
func TestWriteLock_Token_reentry(t *testing.T) {
	s := server(t)
	ctx := latchkey.WithOwner(context.Background())
	rw := rwlock.New(client(t, s), lockName(t))
	wl := rw.WriteLock()
	must(t, wl.Lock(ctx))
	first := wl.Token()
	must(t, wl.Lock(ctx))
	second := wl.Token()
	if first == 0 || second != first+1 {
		t.Fatalf("tokens %d then %d on re-entry; want the next", first, second)
	}
	must(t, wl.Unlock(ctx), rw.RLock(ctx))
	if tok := wl.Token(); tok != second {
		t.Errorf("Token() = %d with a write hold left and a read hold on top, want the newest, %d", tok, second)
	}
	must(t, wl.Unlock(ctx))
	if tok := wl.Token(); tok != 0 {
		t.Errorf("Token() = %d after the downgrade to read, want 0", tok)
	}
	must(t, rw.RUnlock(ctx))
}

// A counter that is gone (deleted, or lost to a restart without
// persistence) starts again from the server's clock in µs, above every
// token handed out before.
func TestWriteLock_Token_counterLost(t *testing.T) {
	onBoth(t, func(t *testing.T, newClient func() *redis.Client) {
		ctx, name := context.Background(), lockName(t)
		wl := rwlock.New(newClient(), name).WriteLock()
		var last int64
		for range 3 {
			must(t, wl.Lock(ctx))
			last = wl.Token()
			must(t, wl.Unlock(ctx))
		}
		if last < time.Now().Add(-time.Hour).UnixMicro() {
			t.Fatalf("token %d: a new counter does not start from the clock in µs", last)
		}
		newClient().Del(ctx, tokenKey(name))
		must(t, wl.Lock(ctx))
		if tok := wl.Token(); tok <= last {
			t.Errorf("token %d after the counter was lost, not above %d", tok, last)
		}
		must(t, wl.Unlock(ctx))
	})
}

// The same across a real restart that lost everything.
func TestWriteLock_Token_restart(t *testing.T) {
	s := redistest.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wl := rwlock.New(locktest.Client(t, s), lockName(t)).WriteLock()
	must(t, wl.Lock(ctx))
	last := wl.Token()
	must(t, wl.Unlock(ctx))
	s.CrashRestart(t)
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err = wl.Lock(ctx); err == nil || errors.Is(err, ctx.Err()) {
			break
		}
	}
	must(t, err)
	if tok := wl.Token(); tok <= last {
		t.Errorf("token %d after a restart that lost the counter, not above %d", tok, last)
	}
	must(t, wl.Unlock(ctx))
}

// A Redisson writer's holds draw no token and leave the counter alone:
// latchkey's write tokens go on from the last one, whoever wrote between.
func TestWriteLock_Token_redissonBetween(t *testing.T) {
	s := server(t)
	ctx, name := context.Background(), lockName(t)
	wl := rwlock.New(client(t, s), name).WriteLock()
	must(t, wl.Lock(ctx))
	last := wl.Token()
	must(t, wl.Unlock(ctx))
	java := &redissonWriter{c: s.Client(t), name: name, owner: "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1"}
	must(t, java.lock(ctx))
	if n, err := java.c.Get(ctx, tokenKey(name)).Int64(); err != nil || n != last {
		t.Errorf("counter %d (%v) while a Redisson writer holds, want it left at %d", n, err, last)
	}
	must(t, java.unlock(ctx), wl.Lock(ctx))
	if tok := wl.Token(); tok != last+1 {
		t.Errorf("token %d after a Redisson writer's hold, want the next after %d", tok, last)
	}
	must(t, wl.Unlock(ctx))
}
