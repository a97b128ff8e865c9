package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// BenchmarkLockUnlock is what one uncontended Lock+Unlock allocates on
// the client, on a real server (run with -benchmem; allocs/op counts
// every allocation of the process, its background goroutines' too):
// latchkey's mutex with a handle kept across Locks, a new handle per Lock
// and latchkey.WithOwner; beside it, what the same operation costs a
// client that sends only the commands: latchkey's own two scripts sent
// raw with go-redis, Redisson's RFencedLock protocol (the bench's
// emulation) and bsm/redislock's SET NX.
//
//	go -C bench test -run '^$' -bench LockUnlock -benchmem -count 3
func BenchmarkLockUnlock(b *testing.B) {
	srv := redistest.StartServer(b)
	for _, bc := range []struct {
		name string
		op   func(b *testing.B, c *redis.Client, name string) func(context.Context) error
	}{
		{"latchkey/kept-handle", func(_ *testing.B, c *redis.Client, name string) func(context.Context) error {
			m := mutex.New(c, name)
			return func(ctx context.Context) error { return lockUnlock(ctx, m) }
		}},
		{"latchkey/new-handle", func(_ *testing.B, c *redis.Client, name string) func(context.Context) error {
			return func(ctx context.Context) error { return lockUnlock(ctx, mutex.New(c, name)) }
		}},
		{"latchkey/WithOwner", func(_ *testing.B, c *redis.Client, name string) func(context.Context) error {
			// One owner for all the Locks, as in the instructions scenario.
			m, octx := mutex.New(c, name), latchkey.WithOwner(context.Background())
			return func(context.Context) error { return lockUnlock(octx, m) }
		}},
		{"latchkey-scripts-raw", rawScripts},
		{"redisson-fenced", func(b *testing.B, c *redis.Client, name string) func(context.Context) error {
			conn := &Conn{Client: c}
			b.Cleanup(func() { (&Clients{List: []*Conn{conn}}).Close() })
			r := newRedissonFencedLock(conn, name)
			return func(ctx context.Context) error { return lockUnlock(ctx, r) }
		}},
		{"redislock", func(_ *testing.B, c *redis.Client, name string) func(context.Context) error {
			rl := redislock.New(c)
			return func(ctx context.Context) error {
				l, err := rl.Obtain(ctx, name, redislockTTL, nil)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			b.Cleanup(func() {
				_ = latchkey.Close(c)
				_ = c.Close()
			})
			ctx := context.Background()
			op := bc.op(b, c, fmt.Sprintf("allocs:{%s}", b.Name()))
			// Warm: scripts loaded, connections made, a kept handle's
			// releases on their fast path.
			for range 10 {
				if err := op(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := op(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// rawScripts sends what latchkey's kept handle sends for a Lock+Unlock of
// a free lock, and nothing else: EVALSHA of mutex_take_free.lua with a
// fresh owner id, then of mutex_release_alone.lua with a fresh request
// record and the previous release's record to delete.
func rawScripts(b *testing.B, c *redis.Client, name string) func(context.Context) error {
	if err := latchkey.Preload(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	take, alone := scripts.Get("mutex_take_free").Hash(), scripts.Get("mutex_release_alone").Hash()
	l := keys.LockOf(name)
	lease, ttl := scripts.Ms(30*time.Second), scripts.Ms(rt.RecordTTL(c))
	prev := ""
	return func(ctx context.Context) error {
		id := owner.New()
		vs, err := c.EvalSha(ctx, take, []string{l.Name, l.Token, l.Grant}, id, lease).Int64Slice()
		if err != nil || vs[0] != 1 {
			return fmt.Errorf("take: %v %v", vs, err)
		}
		ks, old := []string{l.Name, l.Grant, l.Deadlines, l.Channel}, 0
		if prev != "" {
			ks, old = append(ks, prev), 1
		}
		rec := keys.Once(name, owner.New())
		n, err := c.EvalSha(ctx, alone, append(ks, rec), id, lease, "0", "PUBLISH", old, ttl).Int64()
		if err != nil || n != 1 {
			return fmt.Errorf("release: %d %v", n, err)
		}
		prev = rec
		return nil
	}
}
