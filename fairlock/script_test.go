package fairlock

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// These tests drive the fair lock's scripts directly, at chosen client times.

func scriptMutex(t *testing.T, opts ...Option) (*Mutex, *redis.Client) {
	_, c := redistest.Miniredis(t)
	return New(c, "job", opts...), c
}

func acquireAt(t *testing.T, m *Mutex, op, id string, now time.Time, reentrant bool) (bool, int64) {
	t.Helper()
	reentry := scripts.Fresh
	if reentrant {
		reentry = scripts.Reentrant
	}
	vs, err := scripts.Ints(runAt(t, m, op, id, reentry, now).Cmd)
	if err != nil || len(vs) < 2 {
		t.Fatalf("acquire reply %v, %v", vs, err)
	}
	ok, v := vs[0] == 1, vs[1]
	return ok, v
}

// The operations the tests run.
const (
	opAcquire = "acquire" // and queue up if not acquired
	opTry     = "try"
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
)

// runAt runs m's operation op for owner id at the client time now,
// without a request record, its waiter on the Hub "hub" with letters to
// id; reentry is an acquisition's (see lockcore.Waiter.Reentry).
func runAt(t *testing.T, m *Mutex, op, id, reentry string, now time.Time) rt.Reply {
	t.Helper()
	p := m.l.Proto.(*protocol)
	lease, wait, live := p.cfg.TTL(), p.cfg.wait, p.cfg.liveness
	var req scripts.Request
	switch op {
	case opAcquire, opTry:
		req = scripts.FairAcquire{Lock: p.lock, Owner: id, Lease: lease, Wait: wait, Liveness: live,
			Reentry: reentry, Hub: "hub", Key: id, Try: op == opTry}.Request()
	case opRelease:
		req = scripts.FairRelease{Lock: p.lock, Owner: id, Lease: lease, Wait: wait, Liveness: live}.Request()
	case opDequeue:
		req = scripts.FairDequeue{Lock: p.lock, Owner: id, Lease: lease, Wait: wait, Liveness: live,
			Hub: "hub", Key: id}.Request()
	case opForce:
		req = scripts.FairForce{Lock: p.lock, Lease: lease, Wait: wait, Liveness: live}.Request()
	}
	return sendAt(t, m.l.Client, now, req)
}

// sendAt sends req as the send path does, but at the client time now,
// which the send path would take from its own clock.
func sendAt(t *testing.T, c redis.UniversalClient, now time.Time, req scripts.Request) rt.Reply {
	t.Helper()
	pub, err := rt.Of(c).Hub().PublishCommand(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for in, v := range map[scripts.Input]any{scripts.Now: now.UnixMilli(), scripts.Pub: pub,
		scripts.Grace: scripts.Ms(handoff.Grace), scripts.Counted: handoff.Counted(c, pub)} {
		if pos, ok := req.Input(in); ok {
			req.Args[pos] = v
		}
	}
	ks, args := req.Keys, req.Args
	if req.Script.Recorded() { // no record: the first key stands in for its key (see once.lua)
		ks, args = append(ks, ks[0]), append(args, 0, 0)
	}
	return rt.Reply{Cmd: req.Script.Eval(context.Background(), c, ks, args...)}
}

// A resent acquisition of a fresh id that was applied succeeds again
// without a second hold; an owner's re-entry counts.
func TestScriptResentAcquisition(t *testing.T) {
	m, c := scriptMutex(t)
	now := time.Now()
	for range 2 {
		if ok, _ := acquireAt(t, m, opAcquire, "a:1", now, false); !ok {
			t.Fatal("not acquired")
		}
	}
	if n := c.HGet(context.Background(), "job", "a:1").Val(); n != "1" {
		t.Fatalf("hold count after a resend = %s, want 1", n)
	}
	if ok, _ := acquireAt(t, m, opAcquire, "a:1", now, true); !ok {
		t.Fatal("re-entry refused")
	}
	if n := c.HGet(context.Background(), "job", "a:1").Val(); n != "2" {
		t.Fatalf("hold count after re-entry = %s, want 2", n)
	}
}

// The retry bounds: a waiter behind a live head gets the heartbeat, even
// when the lock is free (no 0ms retry, no busy polling); behind a head
// close to its deadline, that deadline; the first waiter, the holder's TTL.
func TestScriptRetryBounds(t *testing.T) {
	m, c := scriptMutex(t, WithLivenessTimeout(3*time.Second), WithLease(10*time.Second))
	ctx, now := context.Background(), time.Now()
	ms := func(d time.Duration) int64 { return d.Milliseconds() }

	c.RPush(ctx, "redisson_lock_queue:{job}", "head:1")
	c.ZAdd(ctx, "redisson_lock_timeout:{job}", redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: "head:1"})
	if ok, v := acquireAt(t, m, opAcquire, "b:1", now, false); ok || v != ms(time.Second) {
		t.Fatalf("behind a live head, lock free = %v, %d; want false, 1000 (the heartbeat)", ok, v)
	}
	c.ZAdd(ctx, "redisson_lock_timeout:{job}", redis.Z{Score: float64(now.Add(400 * time.Millisecond).UnixMilli()), Member: "head:1"})
	if ok, v := acquireAt(t, m, opAcquire, "b:1", now, false); ok || v != 401 {
		t.Fatalf("behind a head 400ms from its deadline = %v, %d; want false, 401", ok, v)
	}
	// The head's deadline passes: it is skipped, and b takes the free lock.
	if ok, _ := acquireAt(t, m, opAcquire, "b:1", now.Add(400*time.Millisecond), false); !ok {
		t.Fatal("the stale head was not skipped")
	}
	// c waits first in line behind b's 10s lease: it sleeps one heartbeat.
	if ok, v := acquireAt(t, m, opAcquire, "c:1", now, false); ok || v != ms(time.Second) {
		t.Fatalf("first in line behind a 10s lease = %v, %d; want false, 1000", ok, v)
	}
	c.PExpire(ctx, "job", 300*time.Millisecond)
	if ok, v := acquireAt(t, m, opAcquire, "c:1", now, false); ok || v < 1 || v > 300 {
		t.Fatalf("first in line behind a 300ms TTL = %v, %d; want false, 1..300", ok, v)
	}
}

// try never queues; acquire queues once, however often it is resent.
func TestScriptTryLeavesNoTrace(t *testing.T) {
	m, c := scriptMutex(t)
	ctx, now := context.Background(), time.Now()
	acquireAt(t, m, opAcquire, "a:1", now, false)
	if ok, _ := acquireAt(t, m, opTry, "b:1", now, false); ok {
		t.Fatal("try took a held lock")
	}
	if n := c.LLen(ctx, "redisson_lock_queue:{job}").Val(); n != 0 {
		t.Fatalf("try queued: %d", n)
	}
	for range 3 {
		acquireAt(t, m, opAcquire, "b:1", now, false)
	}
	if n, z := c.LLen(ctx, "redisson_lock_queue:{job}").Val(), c.ZCard(ctx, "redisson_lock_timeout:{job}").Val(); n != 1 || z != 1 {
		t.Fatalf("queue %d, deadlines %d; want 1, 1", n, z)
	}
}

// queueAt returns the queue, the Redisson deadlines and the heartbeats of
// the lock "job", deadlines and heartbeats as offsets from t0 in ms.
func queueAt(t *testing.T, c *redis.Client, t0 time.Time) ([]string, map[string]int64, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	zset := func(key string) map[string]int64 {
		zs, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		m := make(map[string]int64)
		for _, z := range zs {
			who := z.Member.(string)
			if key == "latchkey_lock_heartbeat:{job}" { // <hub id>/<owner>
				_, who, _ = strings.Cut(who, "/")
			}
			m[who] = int64(z.Score) - t0.UnixMilli()
		}
		return m
	}
	return c.LRange(ctx, "redisson_lock_queue:{job}", 0, -1).Val(),
		zset("redisson_lock_timeout:{job}"), zset("latchkey_lock_heartbeat:{job}")
}

// redissonJoins queues owner as Redisson's acquire script would, behind
// the current tail.
func redissonJoins(t *testing.T, c *redis.Client, owner string, wait time.Duration) {
	t.Helper()
	ctx := context.Background()
	tail := c.LIndex(ctx, "redisson_lock_queue:{job}", -1).Val()
	d := c.ZScore(ctx, "redisson_lock_timeout:{job}", tail).Val() + float64(wait.Milliseconds())
	c.ZAdd(ctx, "redisson_lock_timeout:{job}", redis.Z{Score: d, Member: owner})
	c.RPush(ctx, "redisson_lock_queue:{job}", owner)
}

// Redisson's deadline arithmetic, step by step, with latchkey's heartbeat
// beside it (wait timeout 1s, liveness 3s, lease 10s; miniredis keeps TTLs
// still, so the lock's PTTL is the lease).
func TestScriptRedissonArithmetic(t *testing.T) {
	m, c := scriptMutex(t, WithWaitTimeout(time.Second), WithLivenessTimeout(3*time.Second), WithLease(10*time.Second))
	t0 := time.Now()
	at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	expect := func(step string, q []string, ds, hs map[string]int64) {
		t.Helper()
		gq, gds, ghs := queueAt(t, c, t0)
		if !slices.Equal(gq, q) || !maps.Equal(gds, ds) || !maps.Equal(ghs, hs) {
			t.Fatalf("%s:\n queue %q, deadlines %v, heartbeats %v\nwant %q, %v, %v", step, gq, gds, ghs, q, ds, hs)
		}
	}
	acquireAt(t, m, opAcquire, "h:1", at(0), false)
	acquireAt(t, m, opAcquire, "a:1", at(0), false)
	expect("first waiter: lease end + wait", []string{"a:1"}, map[string]int64{"a:1": 11000}, map[string]int64{"a:1": 3000})
	redissonJoins(t, c, "j:1", time.Second)
	acquireAt(t, m, opAcquire, "b:1", at(5), false)
	expect("next waiters: the one before + wait", []string{"a:1", "j:1", "b:1"},
		map[string]int64{"a:1": 11000, "j:1": 12000, "b:1": 13000}, map[string]int64{"a:1": 3000, "b:1": 3005})
	// The heartbeats outlive the last latchkey waiter's deadline, so that a
	// dead waiter is never mistaken for a Redisson one while it matters.
	if d := c.PTTL(context.Background(), "latchkey_lock_heartbeat:{job}").Val(); d != 12995*time.Millisecond {
		t.Fatalf("heartbeat key TTL = %v, want b:1's deadline from now, 12.995s", d)
	}
	acquireAt(t, m, opAcquire, "a:1", at(10), false)
	expect("an attempt renews the heartbeat only", []string{"a:1", "j:1", "b:1"},
		map[string]int64{"a:1": 11000, "j:1": 12000, "b:1": 13000}, map[string]int64{"a:1": 3010, "b:1": 3005})
	if res, err := scripts.Int(m.l.Proto.Release(context.Background(), "h:1", false, "").Cmd); res != 1 || err != nil {
		t.Fatalf("release = %d, %v", res, err)
	}
	if ok, _ := acquireAt(t, m, opAcquire, "a:1", at(20), false); !ok {
		t.Fatal("the first waiter did not take the free lock")
	}
	expect("an acquisition brings every deadline one wait closer", []string{"j:1", "b:1"},
		map[string]int64{"j:1": 11000, "b:1": 12000}, map[string]int64{"b:1": 3005})
	redissonJoins(t, c, "k:1", time.Second)
	acquireAt(t, m, opAcquire, "c:1", at(3005), false)
	expect("a dead latchkey waiter leaves, and those behind come closer", []string{"j:1", "k:1", "c:1"},
		map[string]int64{"j:1": 11000, "k:1": 12000, "c:1": 13000}, map[string]int64{"c:1": 6005})
	acquireAt(t, m, opAcquire, "c:1", at(11000), false)
	expect("a stale head leaves, and nobody moves", []string{"k:1", "c:1"},
		map[string]int64{"k:1": 12000, "c:1": 13000}, map[string]int64{"c:1": 14000})
	if err := runAt(t, m, opDequeue, "c:1", scripts.Fresh, at(11001)).Err(); err != nil {
		t.Fatal(err)
	}
	expect("a waiter that gives up", []string{"k:1"}, map[string]int64{"k:1": 12000}, map[string]int64{})
}

// A stale Redisson waiter behind a live head is kept: Redisson removes
// stale waiters only at the head.
func TestScriptStaleOnlyAtHead(t *testing.T) {
	m, c := scriptMutex(t)
	ctx, t0 := context.Background(), time.Now()
	for _, w := range []redis.Z{{Score: float64(t0.Add(time.Minute).UnixMilli()), Member: "x:1"}, {Score: float64(t0.Add(-time.Second).UnixMilli()), Member: "y:1"}} {
		c.ZAdd(ctx, "redisson_lock_timeout:{job}", w)
		c.RPush(ctx, "redisson_lock_queue:{job}", w.Member)
	}
	acquireAt(t, m, opAcquire, "z:1", t0, false)
	if q, ds, _ := queueAt(t, c, t0); !slices.Equal(q, []string{"x:1", "y:1", "z:1"}) || ds["y:1"] != -1000 {
		t.Fatalf("queue %q, deadlines %v; want the stale y:1 kept behind x:1", q, ds)
	}
}

// A latchkey waiter still queued when its deadline passes is a stale first
// waiter by Redisson's rule, heartbeat or not: it queues again at the tail,
// as a Redisson waiter would.
func TestScriptLiveWaiterPastDeadline(t *testing.T) {
	m, c := scriptMutex(t, WithWaitTimeout(time.Second), WithLivenessTimeout(time.Minute), WithLease(10*time.Second))
	t0 := time.Now()
	acquireAt(t, m, opAcquire, "h:1", t0, false)
	acquireAt(t, m, opAcquire, "a:1", t0, false)
	acquireAt(t, m, opAcquire, "b:1", t0, false)
	late := t0.Add(11 * time.Second)
	if ok, _ := acquireAt(t, m, opAcquire, "a:1", late, false); ok {
		t.Fatal("acquired a held lock")
	}
	q, ds, hs := queueAt(t, c, t0)
	if !slices.Equal(q, []string{"b:1", "a:1"}) || ds["a:1"] != 13000 || hs["a:1"] != 71000 {
		t.Fatalf("queue %q, deadlines %v, heartbeats %v; want a:1 again at the tail, deadline b:1's + 1s", q, ds, hs)
	}
}
