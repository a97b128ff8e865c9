package fairlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// tokenKey is the fair lock's fencing counter, latchkey's own key.
func tokenKey(name string) string { return "latchkey_lock_token:{" + name + "}" }

// counter reads the fencing counter of name.
func counter(t *testing.T, c redis.UniversalClient, name string) int64 {
	t.Helper()
	n, err := c.Get(context.Background(), tokenKey(name)).Int64()
	if err != nil {
		t.Fatalf("GET %s: %v", tokenKey(name), err)
	}
	return n
}

// Holders on three clients, two handles each, take the lock in turns, most
// of them queued and granted it by a release: each notes its token while
// it holds, so the notes are in acquisition order, and must strictly
// increase. Some holders re-enter, which draws the next token too. A
// handle that holds nothing has token 0.
func TestMutex_Token_concurrent(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, name := testCtx(t), lockName()
		const clients, handles, rounds = 3, 2, 4
		var (
			mu     sync.Mutex
			tokens []int64
		)
		note := func(tok int64) {
			mu.Lock()
			tokens = append(tokens, tok)
			mu.Unlock()
		}
		cs := make([]*redis.Client, clients)
		for i := range cs {
			cs[i] = newClient()
		}
		var wg sync.WaitGroup
		errs := make(chan error, clients*handles)
		for i := range clients * handles {
			m := fairlock.New(cs[i%clients], name)
			wg.Go(func() { errs <- takeTurns(ctx, m, i, rounds, note) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(tokens) < clients*handles*rounds {
			t.Fatalf("%d tokens noted, want at least %d", len(tokens), clients*handles*rounds)
		}
		for i := 1; i < len(tokens); i++ {
			if tokens[i] <= tokens[i-1] {
				t.Fatalf("token %d after %d (acquisition %d): not increasing\n%v", tokens[i], tokens[i-1], i, tokens)
			}
		}
		if last, n := tokens[len(tokens)-1], counter(t, newClient(), name); n != last {
			t.Errorf("counter %d after the last acquisition's token %d", n, last)
		}
	})
}

// takeTurns locks m rounds times, noting its token while it holds, and
// with an owner every third round, re-entering then, which must draw a
// greater token.
func takeTurns(ctx context.Context, m *fairlock.Mutex, i, rounds int, note func(int64)) error {
	for r := range rounds {
		octx, owned := ctx, (i+r)%3 == 0
		if owned {
			octx = latchkey.WithOwner(ctx)
		}
		if err := m.Lock(octx); err != nil {
			return err
		}
		outer := m.Token()
		note(outer)
		if owned {
			if err := m.Lock(octx); err != nil {
				return err
			}
			if m.Token() <= outer {
				return fmt.Errorf("re-entry's token %d, not above the hold's %d", m.Token(), outer)
			}
			note(m.Token())
			if err := m.Unlock(octx); err != nil {
				return err
			}
		}
		if err := m.Unlock(octx); err != nil {
			return err
		}
		if tok := m.Token(); tok != 0 {
			return fmt.Errorf("Token() = %d after the last Unlock, want 0", tok)
		}
	}
	return nil
}

// An owner's re-entry draws the next token, as a mutex's does (and
// Redisson's RFencedLock): Token reports the newest while any hold is left,
// and 0 after the last Unlock.
func TestMutex_Token_reentry(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, name := latchkey.WithOwner(testCtx(t)), lockName()
		m := fairlock.New(newClient(), name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		first := m.Token()
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		second := m.Token()
		if first == 0 || second != first+1 {
			t.Fatalf("tokens %d then %d on re-entry; want the next", first, second)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if tok := m.Token(); tok != second {
			t.Errorf("Token() = %d with one hold left, want the newest, %d", tok, second)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if tok := m.Token(); tok != 0 {
			t.Errorf("Token() = %d after the last Unlock, want 0", tok)
		}
	})
}

// A counter that is gone (deleted, or lost to a restart without
// persistence) starts again from the server's clock in µs, above every
// token handed out before.
func TestMutex_Token_counterLost(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, name, c := testCtx(t), lockName(), newClient()
		m := fairlock.New(newClient(), name)
		var last int64
		for range 3 {
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			last = m.Token()
			if err := m.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if last < time.Now().Add(-time.Hour).UnixMicro() {
			t.Fatalf("token %d: a new counter does not start from the clock in µs", last)
		}
		c.Del(ctx, tokenKey(name))
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if tok := m.Token(); tok <= last {
			t.Errorf("token %d after the counter was lost, not above %d", tok, last)
		}
		_ = m.Unlock(ctx)
	})
}

// The same across a real restart that lost everything.
func TestMutex_Token_restart(t *testing.T) {
	s := redistest.StartServer(t)
	ctx, name := testCtx(t), lockName()
	c := locktest.Client(t, s)
	m := fairlock.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	last := m.Token()
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	s.CrashRestart(t)
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err = m.Lock(ctx); err == nil || errors.Is(err, ctx.Err()) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if tok := m.Token(); tok <= last {
		t.Errorf("token %d after a restart that lost the counter, not above %d", tok, last)
	}
	_ = m.Unlock(ctx)
}

// A Redisson client's holds draw no token and leave the counter alone:
// latchkey's tokens go on from the last one, whoever held in between,
// and a latchkey waiter that a Redisson release wakes draws the next.
func TestMutex_Token_redissonBetween(t *testing.T) {
	newClient := realServer(t)
	ctx, name, c := testCtx(t), lockName(), newClient()
	m := fairlock.New(newClient(), name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	last := m.Token()
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	java := newJavaLock(c, name)
	if _, err := java.Lock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := counter(t, c, name); n != last {
		t.Errorf("counter %d while a Redisson client holds, want it left at %d", n, last)
	}
	done := goLock(func() error { return m.Lock(ctx) })
	waitQueued(t, c, name, 1)
	if err := java.Unlock(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r := await(t, done, 10*time.Second); r.err != nil {
		t.Fatal(r.err)
	}
	if tok := m.Token(); tok != last+1 {
		t.Errorf("token %d after a Redisson client's hold, want the next after %d", tok, last)
	}
	_ = m.Unlock(ctx)
}
