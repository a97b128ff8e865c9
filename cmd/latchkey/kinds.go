package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// The kinds of synchronizer, as -kind and the output name them.
const (
	kindMutex     = "mutex"
	kindFairLock  = "fairlock"
	kindRWLock    = "rwlock"
	kindSemaphore = "semaphore"
	kindPermits   = "permitsemaphore"
	kindLatch     = "countdownlatch"
	// kindCounter is a plain integer string: a semaphore or a latch, which
	// the layout cannot tell apart (-kind says which).
	kindCounter = "semaphore|countdownlatch"
	kindNone    = "none"  // nothing under the name
	kindOther   = "other" // a key that is no synchronizer's layout
)

const kindList = "mutex, fairlock, rwlock, semaphore, permitsemaphore, countdownlatch"

// checkKind validates a -kind value ("" means detect).
func checkKind(k string) error {
	switch k {
	case "", kindMutex, kindFairLock, kindRWLock, kindSemaphore, kindPermits, kindLatch:
		return nil
	}
	return usagef("-kind %q: want one of %s", k, kindList)
}

// names are the keys and channels of every kind under one name, as the
// primitives lay them out (internal/keys).
type names struct {
	name         string
	lock         keys.Lock
	rw           keys.RWLock
	sem          keys.Semaphore
	latchChannel string
}

func namesOf(name string) names {
	return names{
		name:         name,
		lock:         keys.LockOf(name),
		rw:           keys.RWLockOf(name),
		sem:          keys.SemaphoreOf(name),
		latchChannel: keys.LatchChannel(name),
	}
}

// detect tells the kind of name from what Redis holds: a hash with a mode
// field is a read-write lock, another hash of owner fields a lock (a fair
// one when Redisson's fair queue is beside it, or the fair lock's fencing
// counter without the mutex's), an integer string with the permit zset
// beside it a permit semaphore, any other integer string a semaphore or a
// latch (kindCounter). With nothing under the name itself, waiters queued
// for a lock, or a lock's fencing counter, still make it that lock.
func detect(ctx context.Context, c *conn, name string) (string, error) {
	n := namesOf(name)
	exists := map[string]*redis.IntCmd{}
	var typ *redis.StatusCmd
	var mode *redis.BoolCmd
	_, err := c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		typ = p.Type(ctx, name)
		mode = p.HExists(ctx, name, "mode")
		for _, k := range []string{n.lock.FairQueue, n.lock.FairDeadlines, n.lock.Heartbeats, n.lock.Queue, n.sem.Leases, n.rw.Writers,
			n.lock.Token, n.lock.FairToken, n.rw.Token} {
			exists[k] = p.Exists(ctx, k)
		}
		return nil
	})
	switch {
	case err == nil:
	case typ.Err() != nil:
		return "", c.keyErr(name, typ.Err())
	case typ.Val() == "":
		// TYPE had no answer: the pipeline failed as a whole (no
		// connection, or no master from the sentinels), and go-redis may
		// leave that error out of the commands.
		return "", c.keyErr(name, err)
	}
	has := func(k string) bool { return exists[k].Val() == 1 }
	fair := has(n.lock.FairQueue) || has(n.lock.FairDeadlines) || has(n.lock.Heartbeats) ||
		has(n.lock.FairToken) && !has(n.lock.Token)
	switch typ.Val() {
	case "hash":
		switch {
		case mode.Val():
			return kindRWLock, nil
		case !lockFields(ctx, c, name):
			return kindOther, nil
		case fair && !has(n.lock.Queue):
			return kindFairLock, nil
		}
		return kindMutex, nil
	case "string":
		v, err := c.client.Get(ctx, name).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", c.keyErr(name, err)
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return kindOther, nil
		}
		if has(n.sem.Leases) {
			return kindPermits, nil
		}
		return kindCounter, nil
	case "none":
		switch {
		case has(n.lock.Queue):
			return kindMutex, nil
		case fair: // queued for, or free with its counter left from earlier holds
			return kindFairLock, nil
		case has(n.rw.Writers):
			return kindRWLock, nil
		case has(n.sem.Leases):
			return kindPermits, nil
		// Free, its fencing counter left from earlier holds.
		case has(n.lock.Token):
			return kindMutex, nil
		case has(n.rw.Token):
			return kindRWLock, nil
		}
		return kindNone, nil
	}
	return kindOther, nil
}

// lockFields reports whether every field of the hash name is an owner id
// with an integer hold count, as in a Redisson lock.
func lockFields(ctx context.Context, c *conn, name string) bool {
	m, err := c.client.HGetAll(ctx, name).Result()
	if err != nil {
		return false
	}
	for f, v := range m {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil || !ownerShaped(f) {
			return false
		}
	}
	return true
}

// ownerShaped reports whether f looks like a Redisson owner field:
// <client id>:<n>, or <client id>:<n>:write for a writer.
func ownerShaped(f string) bool {
	f = strings.TrimSuffix(f, ":write")
	i := strings.LastIndexByte(f, ':')
	if i <= 0 || i == len(f)-1 {
		return false
	}
	_, err := strconv.ParseUint(f[i+1:], 10, 64)
	return err == nil
}

// auxiliary reports whether key is one of the keys that latchkey or
// Redisson keep beside a synchronizer (queues, deadlines, tokens, grants,
// markers, per-hold timeouts, permit leases), which ls does not list as
// entries of their own.
func auxiliary(key string) bool {
	switch {
	case strings.HasPrefix(key, "latchkey_"), strings.HasPrefix(key, "redisson_"):
		return true
	case strings.Contains(key, ":rwlock_timeout:"):
		return true
	case strings.HasSuffix(key, ":timeout") && strings.Contains(key, "{"):
		return true // {N}:timeout, a permit semaphore's leases
	}
	return false
}
