package latchkey_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/election"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// A name is data: every primitive takes any string, works with it on a
// single server with its keys where Redisson puts them, and on a cluster
// either works or refuses it at every call with ErrCrossSlot.

// awkwardNames are names as a request could carry them; %s makes each
// unique to its run, placed so as to keep the name's shape. onCluster says
// whether a cluster can keep the name's keys in one slot.
var awkwardNames = []struct {
	name      string
	tmpl      string
	onCluster bool
}{
	{"empty", "", false},
	{"close brace", "a}b%s", false},
	{"empty tag", "{}x%s", false},
	{"open brace", "{x%s", false},
	{"trailing brace", "x%s{", false},
	{"lone close", "%s}", false},
	{"unicode", "ünïcødé ✓ %s", true},
	{"spaces and newlines", "a b\tc\n%s\n", true},
	{"long", strings.Repeat("x", 8000) + "%s", true},
	{"tag then close", "{%s}a}b", true},
	{"tagged id", "order:{%s}", true},
}

// redissonPrefix and redissonSuffix are Redisson's prefixName and
// suffixName, spelled here as the specification the keys are checked
// against.
func redissonPrefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

func redissonSuffix(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}

// A namedUse takes and releases a primitive under a name, checking through
// raw that its keys are where Redisson puts them, and leaves no key of its
// own behind but the fencing token.
type namedUse struct {
	name string
	use  func(ctx context.Context, c, raw redis.UniversalClient, name string) error
}

// want fails with what differs if got is not want.
func want[T comparable](what string, got T, err error, w T) error {
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case got != w:
		return fmt.Errorf("%s = %v, want %v", what, got, w)
	}
	return nil
}

// lockedHash checks that name is a hash with one owner field (plus the
// mode field of a read-write lock).
func lockedHash(ctx context.Context, raw redis.UniversalClient, name string, fields int64) error {
	n, err := raw.HLen(ctx, name).Result()
	return want("HLEN of the lock's key", n, err, fields)
}

func gone(ctx context.Context, raw redis.UniversalClient, name string) error {
	n, err := raw.Exists(ctx, name).Result()
	return want("EXISTS of the key after release", n, err, 0)
}

var namedUses = []namedUse{
	{"mutex", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		m := mutex.New(c, name)
		if err := m.Lock(ctx); err != nil {
			return err
		}
		if err := lockedHash(ctx, raw, name, 1); err != nil {
			return err
		}
		tok, err := raw.Get(ctx, redissonPrefix("redisson_lock_token", name)).Int64()
		if err := want("the fencing token", tok, err, m.Token()); err != nil {
			return err
		}
		if err := m.Unlock(ctx); err != nil {
			return err
		}
		return gone(ctx, raw, name)
	}},
	{"fairlock", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		m := fairlock.New(c, name)
		if err := m.Lock(ctx); err != nil {
			return err
		}
		if err := lockedHash(ctx, raw, name, 1); err != nil {
			return err
		}
		if err := m.Unlock(ctx); err != nil {
			return err
		}
		return gone(ctx, raw, name)
	}},
	{"rwlock", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		rw := rwlock.New(c, name)
		for _, s := range []struct {
			mode          string
			lock          func(context.Context) error
			unlock        func(context.Context) error
			timeoutPrefix string // a read hold's own key starts with it
		}{
			{"read", rw.RLock, rw.RUnlock, redissonSuffix(name, "")},
			{"write", rw.Lock, rw.Unlock, ""},
		} {
			if err := s.lock(ctx); err != nil {
				return err
			}
			mode, err := raw.HGet(ctx, name, "mode").Result()
			if err := want("the lock's mode", mode, err, s.mode); err != nil {
				return err
			}
			if s.timeoutPrefix != "" {
				// {name}:<owner>:rwlock_timeout:1, Redisson's read hold key
				var owner string
				fields, err := raw.HKeys(ctx, name).Result()
				if err != nil {
					return err
				}
				for _, f := range fields {
					if f != "mode" {
						owner = f
					}
				}
				n, err := raw.Exists(ctx, s.timeoutPrefix+owner+":rwlock_timeout:1").Result()
				if err := want("EXISTS of the read hold's timeout key", n, err, 1); err != nil {
					return err
				}
			}
			if err := s.unlock(ctx); err != nil {
				return err
			}
			if err := gone(ctx, raw, name); err != nil {
				return err
			}
		}
		return nil
	}},
	{"semaphore", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		defer raw.Del(context.WithoutCancel(ctx), name)
		s := semaphore.New(c, name)
		if ok, err := s.TrySetPermits(ctx, 2); !ok || err != nil {
			return fmt.Errorf("TrySetPermits = %v, %w", ok, err)
		}
		if err := s.Acquire(ctx, 1); err != nil {
			return err
		}
		n, err := raw.Get(ctx, name).Int64()
		if err := want("the permits left in the key", n, err, 1); err != nil {
			return err
		}
		return s.Release(ctx, 1)
	}},
	{"permitsemaphore", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		leases := redissonSuffix(name, "timeout")
		defer raw.Del(context.WithoutCancel(ctx), name, leases)
		s := permitsemaphore.New(c, name)
		if ok, err := s.TrySetPermits(ctx, 2); !ok || err != nil {
			return fmt.Errorf("TrySetPermits = %v, %w", ok, err)
		}
		p, err := s.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		if err != nil {
			return err
		}
		n, err := raw.ZCard(ctx, leases).Result()
		if err := want("ZCARD of the leases", n, err, 1); err != nil {
			return err
		}
		if err := p.Release(ctx); err != nil {
			return err
		}
		n, err = raw.Get(ctx, name).Int64()
		return want("the permits in the key after release", n, err, 2)
	}},
	{"countdownlatch", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		l := countdownlatch.New(c, name)
		if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
			return fmt.Errorf("TrySetCount = %v, %w", ok, err)
		}
		n, err := raw.Get(ctx, name).Int64()
		if err := want("the count in the key", n, err, 1); err != nil {
			return err
		}
		if err := l.CountDown(ctx); err != nil {
			return err
		}
		if err := l.Wait(ctx); err != nil {
			return err
		}
		return gone(ctx, raw, name)
	}},
	{"redlock", func(ctx context.Context, c, raw redis.UniversalClient, name string) error {
		m := redlock.New([]redis.UniversalClient{c}, name)
		if err := m.Lock(ctx); err != nil {
			return err
		}
		if err := lockedHash(ctx, raw, name, 1); err != nil {
			return err
		}
		if err := m.Unlock(ctx); err != nil {
			return err
		}
		return gone(ctx, raw, name)
	}},
}

// useNamed runs u under name and returns its error, or a panic as one.
func useNamed(ctx context.Context, u namedUse, c, raw redis.UniversalClient, name string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return u.use(ctx, c, raw, name)
}

func TestNames(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			c, raw := e.Client(), e.Client()
			_, cluster := c.(*redis.ClusterClient)
			for _, n := range awkwardNames {
				name := n.tmpl
				if strings.Contains(name, "%s") {
					name = fmt.Sprintf(name, e.Name)
				}
				t.Run(n.name, func(t *testing.T) {
					for _, u := range namedUses {
						err := useNamed(t.Context(), u, c, raw, name)
						switch {
						case !cluster || n.onCluster:
							if err != nil {
								t.Errorf("%s: %v", u.name, err)
							}
						case !errors.Is(err, latchkey.ErrCrossSlot):
							t.Errorf("%s on a cluster: %v, want an error matching ErrCrossSlot", u.name, err)
						case !strings.Contains(err.Error(), "non-empty hash tag"):
							t.Errorf("%s on a cluster: %v, want it to say how to fix the name", u.name, err)
						case strings.Contains(err.Error(), "CROSSSLOT"):
							t.Errorf("%s on a cluster: %v, want it refused before it is sent", u.name, err)
						}
					}
					if cluster && !n.onCluster {
						noKeys(t, raw.(*redis.ClusterClient), name, e.Name)
					}
				})
			}
		})
	}
}

// noKeys fails t if the cluster holds a key of name, which holds uniq
// unless it is empty.
func noKeys(t *testing.T, c *redis.ClusterClient, name, uniq string) {
	ctx := t.Context()
	pattern := "*" + uniq + "*"
	if name == "" {
		pattern = "*{}*"
		if n, err := c.Exists(ctx, "").Result(); n != 0 || err != nil {
			t.Errorf("EXISTS \"\" = %d, %v: a refused name left its key", n, err)
		}
	}
	err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		var ks []string
		it := m.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			ks = append(ks, it.Val())
		}
		if len(ks) > 0 {
			return fmt.Errorf("a refused name left keys on %s: %q", m.Options().Addr, ks)
		}
		return it.Err()
	})
	if err != nil {
		t.Error(err)
	}
}

// On a cluster client, every method of every primitive that talks to Redis
// refuses a name whose keys would split, before any I/O: the client here
// reaches no server, so any attempt to send would fail otherwise.
func TestNames_refusedBeforeIO(t *testing.T) {
	dead := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: -1})
	defer dead.Close()
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer single.Close()
	const id = "0123456789abcdef0123456789abcdef" // a well-formed permit id
	for _, name := range []string{"", "a}b", "{}x", "{x", "x{", "}"} {
		m := mutex.New(dead, name)
		f := fairlock.New(dead, name)
		rw := rwlock.New(dead, name)
		s := semaphore.New(dead, name)
		ps := permitsemaphore.New(dead, name)
		l := countdownlatch.New(dead, name)
		red := redlock.New([]redis.UniversalClient{single, dead}, name)
		el := election.New(dead, name)
		owned := latchkey.WithOwner(context.Background())
		calls := map[string]func(ctx context.Context) error{
			"mutex.Lock":        m.Lock,
			"mutex.TryLock":     func(ctx context.Context) error { _, err := m.TryLock(ctx, 0); return err },
			"mutex.LockContext": func(ctx context.Context) error { _, err := m.LockContext(ctx); return err },
			"mutex.Unlock":      m.Unlock,
			"mutex.Unlock(owner)": func(context.Context) error {
				return m.Unlock(owned)
			},
			"mutex.ForceUnlock":     func(ctx context.Context) error { _, err := m.ForceUnlock(ctx); return err },
			"mutex.IsLocked":        func(ctx context.Context) error { _, err := m.IsLocked(ctx); return err },
			"mutex.HoldCount":       func(ctx context.Context) error { _, err := m.HoldCount(ctx); return err },
			"mutex.TTL":             func(ctx context.Context) error { _, err := m.TTL(ctx); return err },
			"fairlock.Lock":         f.Lock,
			"fairlock.TryLock":      func(ctx context.Context) error { _, err := f.TryLock(ctx, time.Second); return err },
			"fairlock.LockContext":  func(ctx context.Context) error { _, err := f.LockContext(ctx); return err },
			"fairlock.Unlock":       f.Unlock,
			"fairlock.ForceUnlock":  func(ctx context.Context) error { _, err := f.ForceUnlock(ctx); return err },
			"fairlock.IsLocked":     func(ctx context.Context) error { _, err := f.IsLocked(ctx); return err },
			"fairlock.HoldCount":    func(ctx context.Context) error { _, err := f.HoldCount(ctx); return err },
			"fairlock.TTL":          func(ctx context.Context) error { _, err := f.TTL(ctx); return err },
			"rwlock.RLock":          rw.RLock,
			"rwlock.TryRLock":       func(ctx context.Context) error { _, err := rw.TryRLock(ctx, 0); return err },
			"ReadLock.LockContext":  func(ctx context.Context) error { _, err := rw.ReadLock().LockContext(ctx); return err },
			"rwlock.RUnlock":        rw.RUnlock,
			"rwlock.Lock":           rw.Lock,
			"rwlock.TryLock":        func(ctx context.Context) error { _, err := rw.TryLock(ctx, time.Second); return err },
			"WriteLock.LockContext": func(ctx context.Context) error { _, err := rw.WriteLock().LockContext(ctx); return err },
			"rwlock.Unlock":         rw.Unlock,
			"rwlock.ForceUnlock":    func(ctx context.Context) error { _, err := rw.ForceUnlock(ctx); return err },
			"rwlock.IsLocked":       func(ctx context.Context) error { _, err := rw.IsLocked(ctx); return err },
			"rwlock.TTL":            func(ctx context.Context) error { _, err := rw.TTL(ctx); return err },
			"ReadLock.HoldCount":    func(ctx context.Context) error { _, err := rw.ReadLock().HoldCount(ctx); return err },
			"ReadLock.IsLocked":     func(ctx context.Context) error { _, err := rw.ReadLock().IsLocked(ctx); return err },
			"WriteLock.HoldCount":   func(ctx context.Context) error { _, err := rw.WriteLock().HoldCount(ctx); return err },
			"WriteLock.IsLocked":    func(ctx context.Context) error { _, err := rw.WriteLock().IsLocked(ctx); return err },
			"semaphore.Acquire":     func(ctx context.Context) error { return s.Acquire(ctx, 1) },
			"semaphore.TryAcquire":  func(ctx context.Context) error { _, err := s.TryAcquire(ctx, 1, 0); return err },
			"semaphore.Release":     func(ctx context.Context) error { return s.Release(ctx, 1) },
			"semaphore.TrySet":      func(ctx context.Context) error { _, err := s.TrySetPermits(ctx, 1); return err },
			"semaphore.Set":         func(ctx context.Context) error { return s.SetPermits(ctx, 1) },
			"semaphore.Add":         func(ctx context.Context) error { return s.AddPermits(ctx, 1) },
			"semaphore.Available":   func(ctx context.Context) error { _, err := s.AvailablePermits(ctx); return err },
			"semaphore.Drain":       func(ctx context.Context) error { _, err := s.DrainPermits(ctx); return err },
			"permitsemaphore.Acquire": func(ctx context.Context) error {
				_, err := ps.Acquire(ctx, permitsemaphore.Forever)
				return err
			},
			"permitsemaphore.TryAcquire": func(ctx context.Context) error {
				_, _, err := ps.TryAcquire(ctx, 0, permitsemaphore.Forever)
				return err
			},
			"permitsemaphore.AcquireN": func(ctx context.Context) error {
				_, err := ps.AcquireN(ctx, 2, permitsemaphore.Forever)
				return err
			},
			"permitsemaphore.TryAcquireN": func(ctx context.Context) error {
				_, _, err := ps.TryAcquireN(ctx, 2, time.Second, permitsemaphore.Forever)
				return err
			},
			"permitsemaphore.Release":    func(ctx context.Context) error { return ps.Release(ctx, id) },
			"permitsemaphore.ReleaseAll": func(ctx context.Context) error { return ps.ReleaseAll(ctx) },
			"permitsemaphore.UpdateLeaseTime": func(ctx context.Context) error {
				_, err := ps.UpdateLeaseTime(ctx, id, permitsemaphore.Lease(time.Minute))
				return err
			},
			"permitsemaphore.LeaseTime": func(ctx context.Context) error { _, err := ps.LeaseTime(ctx, id); return err },
			"permitsemaphore.Available": func(ctx context.Context) error { _, err := ps.AvailablePermits(ctx); return err },
			"permitsemaphore.Acquired":  func(ctx context.Context) error { _, err := ps.AcquiredPermits(ctx); return err },
			"permitsemaphore.Permits":   func(ctx context.Context) error { _, err := ps.Permits(ctx); return err },
			"permitsemaphore.TrySet":    func(ctx context.Context) error { _, err := ps.TrySetPermits(ctx, 1); return err },
			"permitsemaphore.Set":       func(ctx context.Context) error { return ps.SetPermits(ctx, 1) },
			"permitsemaphore.Add":       func(ctx context.Context) error { return ps.AddPermits(ctx, 1) },
			"countdownlatch.TrySet":     func(ctx context.Context) error { _, err := l.TrySetCount(ctx, 1); return err },
			"countdownlatch.CountDown":  l.CountDown,
			"countdownlatch.Count":      func(ctx context.Context) error { _, err := l.Count(ctx); return err },
			"countdownlatch.Delete":     func(ctx context.Context) error { _, err := l.Delete(ctx); return err },
			"countdownlatch.Wait":       l.Wait,
			"countdownlatch.TryWait":    func(ctx context.Context) error { _, err := l.TryWait(ctx, time.Second); return err },
			"redlock.Lock":              red.Lock,
			"redlock.TryLock":           func(ctx context.Context) error { _, err := red.TryLock(ctx, 0); return err },
			"redlock.LockContext":       func(ctx context.Context) error { _, err := red.LockContext(ctx); return err },
			"redlock.Unlock":            red.Unlock,
			"redlock.Extend":            func(ctx context.Context) error { return red.Extend(ctx, time.Second) },
			"mutex.Extend":              func(ctx context.Context) error { return m.Extend(ctx, time.Second) },
			"fairlock.Extend":           func(ctx context.Context) error { return f.Extend(ctx, time.Second) },
			"ReadLock.Extend":           func(ctx context.Context) error { return rw.ReadLock().Extend(ctx, time.Second) },
			"WriteLock.Extend":          func(ctx context.Context) error { return rw.WriteLock().Extend(ctx, time.Second) },
			"mutex.Delete":              func(ctx context.Context) error { _, err := m.Delete(ctx); return err },
			"fairlock.Delete":           func(ctx context.Context) error { _, err := f.Delete(ctx); return err },
			"rwlock.Delete":             func(ctx context.Context) error { _, err := rw.Delete(ctx); return err },
			"semaphore.Delete":          func(ctx context.Context) error { _, err := s.Delete(ctx); return err },
			"semaphore.Expire":          func(ctx context.Context) error { _, err := s.Expire(ctx, time.Second); return err },
			"semaphore.TTL":             func(ctx context.Context) error { _, err := s.TTL(ctx); return err },
			"semaphore.TrySetTTL":       func(ctx context.Context) error { _, err := s.TrySetPermitsTTL(ctx, 1, time.Second); return err },
			"permitsemaphore.Delete":    func(ctx context.Context) error { _, err := ps.Delete(ctx); return err },
			"permitsemaphore.Expire":    func(ctx context.Context) error { _, err := ps.Expire(ctx, time.Second); return err },
			"permitsemaphore.TTL":       func(ctx context.Context) error { _, err := ps.TTL(ctx); return err },
			"permitsemaphore.TrySetTTL": func(ctx context.Context) error { _, err := ps.TrySetPermitsTTL(ctx, 1, time.Second); return err },
			"countdownlatch.Expire":     func(ctx context.Context) error { _, err := l.Expire(ctx, time.Second); return err },
			"countdownlatch.TTL":        func(ctx context.Context) error { _, err := l.TTL(ctx); return err },
			"election.Campaign":         func(ctx context.Context) error { _, err := el.Campaign(ctx, "v"); return err },
			"election.Leader":           func(ctx context.Context) error { _, err := el.Leader(ctx); return err },
		}
		for what, call := range calls {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := call(ctx)
			cancel()
			if !errors.Is(err, latchkey.ErrCrossSlot) || !strings.Contains(err.Error(), fmt.Sprintf("name %q", name)) {
				t.Errorf("%s under %q = %v, want an error matching ErrCrossSlot that names it", what, name, err)
			}
		}
	}
}

// A client that is not a cluster client, talking to a cluster node, sends
// the request; the node's CROSSSLOT answer matches ErrCrossSlot too.
func TestNames_crossSlotAnswer(t *testing.T) {
	c := redistest.SharedCluster(t)
	node := closeLater(t, redis.NewClient(&redis.Options{Addr: c.Addrs()[0]}))
	name := "a}b" + uniqueName(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := mutex.New(node, name).TryLock(ctx, 0)
	if !errors.Is(err, latchkey.ErrCrossSlot) || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("TryLock through a plain client = %v, want the server's CROSSSLOT matching ErrCrossSlot", err)
	}
	err = semaphore.New(node, name).Release(ctx, 1)
	if !errors.Is(err, latchkey.ErrCrossSlot) {
		t.Fatalf("Release through a plain client = %v, want an error matching ErrCrossSlot", err)
	}
}
