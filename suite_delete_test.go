package latchkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// A lock's Delete leaves a held lock alone, and deletes every key of a free
// one, Redisson's and latchkey's; tokens keep increasing after it.
func init() {
	type deletable interface {
		Lock(ctx context.Context) error
		Unlock(ctx context.Context) error
		IsLocked(ctx context.Context) (bool, error)
		Delete(ctx context.Context) (bool, error)
	}
	type tokened interface{ Token() int64 }
	for _, kind := range []struct {
		name  string
		open  func(e *env) deletable
		token func(deletable) int64
		keys  func(name string) []string // every key the lock may leave
	}{
		{"mutex", func(e *env) deletable { return mutex.New(e.Client(), e.Name) },
			func(l deletable) int64 { return l.(tokened).Token() },
			func(name string) []string {
				l := keys.LockOf(name)
				return []string{l.Name, l.Token, l.Queue, l.Deadlines, l.Grant}
			}},
		{"fairlock", func(e *env) deletable { return fairlock.New(e.Client(), e.Name) },
			func(l deletable) int64 { return l.(tokened).Token() },
			func(name string) []string {
				l := keys.LockOf(name)
				return []string{l.Name, l.FairQueue, l.FairDeadlines, l.Heartbeats, l.Grant, l.FairToken}
			}},
		{"rwlock", func(e *env) deletable { return rwWriter{rwlock.New(e.Client(), e.Name)} },
			func(l deletable) int64 { return l.(rwWriter).WriteLock().Token() },
			func(name string) []string {
				l := keys.RWLockOf(name)
				return []string{l.Name, l.Writers, l.Epoch, l.Token}
			}},
	} {
		register("contract/"+kind.name+" delete", func(t *testing.T, e *env) {
			ctx := context.Background()
			l := kind.open(e)
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			first := kind.token(l)
			if ok, err := l.Delete(ctx); ok || !errors.Is(err, latchkey.ErrHeld) {
				t.Fatalf("Delete of a held lock = %v, %v; want ErrHeld", ok, err)
			}
			if held, err := l.IsLocked(ctx); !held || err != nil {
				t.Fatalf("after a refused Delete IsLocked = %v, %v", held, err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := l.Delete(ctx); !ok || err != nil {
				t.Fatalf("Delete of a free lock with its counter = %v, %v; want true", ok, err)
			}
			if ks := left(t, e.Client(), kind.keys(e.Name)...); len(ks) > 0 {
				t.Errorf("keys left after Delete: %q", ks)
			}
			if ok, err := l.Delete(ctx); ok || err != nil {
				t.Errorf("second Delete = %v, %v; want false", ok, err)
			}
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if next := kind.token(l); next <= first {
				t.Errorf("token after Delete %d, not above the one before, %d", next, first)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// rwWriter is an RWMutex as a deletable lock on its write side.
type rwWriter struct{ *rwlock.RWMutex }

func (w rwWriter) IsLocked(ctx context.Context) (bool, error) { return w.RWMutex.IsLocked(ctx) }

// left returns those of ks that exist.
func left(t *testing.T, c redis.UniversalClient, ks ...string) []string {
	t.Helper()
	var found []string
	for _, k := range ks {
		n, err := c.Exists(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			found = append(found, k)
		}
	}
	return found
}
