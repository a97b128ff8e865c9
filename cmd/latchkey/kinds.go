package main

import (
	"context"
	"encoding/hex"
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
	// kindEitherLock is a lock hash held by a Redisson owner with nothing
	// beside it: a Redisson RLock and an uncontended RFairLock write the
	// same hash, and nothing else tells them apart.
	kindEitherLock = "mutex|fairlock"
	kindNone       = "none"  // nothing under the name
	kindOther      = "other" // a key that is no synchronizer's layout
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
	election     string // an election's leader record
}

func namesOf(name string) names {
	return names{
		name:         name,
		lock:         keys.LockOf(name),
		rw:           keys.RWLockOf(name),
		sem:          keys.SemaphoreOf(name),
		latchChannel: keys.LatchChannel(name),
		election:     keys.ElectionOf(name).Leader,
	}
}

// detect tells the kind of name from every key latchkey and Redisson keep
// under it and beside it, and the subscribers of its channels:
//
//   - a hash with a mode field is a read-write lock; another hash of owner
//     fields a lock: a fair lock when a fair queue, deadlines or
//     heartbeats are beside it, or the fair lock's fencing counter
//     without the mutex's; a mutex when latchkey's mutex queue, grant or
//     fencing counter (which latchkey's mutex draws at each acquisition,
//     and RFencedLock too), an election's record, or a subscriber on the
//     lock's shared channel (where RLock's waiters wait; a fair lock's
//     wait on channels of their own) is there; else kindEitherLock, for a
//     Redisson RLock and an uncontended RFairLock write the same hash;
//   - an integer string is a permit semaphore with the permit zset beside
//     it, or latchkey waiters' entries of a permit semaphore; a semaphore
//     with a semaphore's entries or grants, or a subscriber on the
//     semaphores' channel; a latch with a subscriber on the latch's
//     channel; otherwise kindCounter, bare when nothing at all is beside
//     it (no queue, no listeners' or turn key either), which ls leaves
//     out;
//   - with nothing under the name itself, waiters queued or a fencing
//     counter still make it the kind they belong to.
//
// The caller's own subscriptions (self) are not counted.
func detect(ctx context.Context, c *conn, name string, self selfListens) (kind string, bare bool, err error) {
	n := namesOf(name)
	exists := map[string]*redis.IntCmd{}
	var typ *redis.StatusCmd
	var mode *redis.BoolCmd
	var semEntries *redis.StringSliceCmd
	_, err = c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		typ = p.Type(ctx, name)
		mode = p.HExists(ctx, name, "mode")
		for _, k := range []string{n.lock.FairQueue, n.lock.FairDeadlines, n.lock.Heartbeats, n.lock.Queue, n.lock.Grant,
			n.sem.Leases, n.rw.Writers, n.lock.Token, n.lock.FairToken, n.rw.Token, n.election,
			n.sem.Queue, n.sem.Grants, n.sem.Listeners, n.sem.Turn} {
			exists[k] = p.Exists(ctx, k)
		}
		semEntries = p.LRange(ctx, n.sem.Queue, 0, maxEntries-1)
		return nil
	})
	switch {
	case err == nil:
	case typ.Err() != nil:
		return "", false, c.keyErr(name, typ.Err())
	case typ.Val() == "":
		// TYPE had no answer: the pipeline failed as a whole (no
		// connection, or no master from the sentinels), and go-redis may
		// leave that error out of the commands.
		return "", false, c.keyErr(name, err)
	}
	has := func(k string) bool { return exists[k].Val() == 1 }
	fair := has(n.lock.FairQueue) || has(n.lock.FairDeadlines) || has(n.lock.Heartbeats) ||
		has(n.lock.FairToken) && !has(n.lock.Token)
	byEntries := entriesKind(semEntries.Val())
	switch typ.Val() {
	case "hash":
		if mode.Val() {
			return kindRWLock, false, nil
		}
		ok, err := lockFields(ctx, c, name)
		switch {
		case err != nil: // not "other": a read cut short (a watch's, at its end) is no answer
			return "", false, c.keyErr(name, err)
		case !ok:
			return kindOther, false, nil
		case fair && !has(n.lock.Queue):
			return kindFairLock, false, nil
		case has(n.lock.Queue) || has(n.lock.Grant) || has(n.lock.Token) || has(n.election):
			return kindMutex, false, nil
		}
		subs, err := subscribers(ctx, c, []string{n.lock.Channel}, self)
		if err != nil {
			return "", false, c.keyErr(name, err)
		}
		if subs[n.lock.Channel] > 0 {
			return kindMutex, false, nil
		}
		return kindEitherLock, false, nil
	case "string":
		v, err := c.client.Get(ctx, name).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", false, c.keyErr(name, err)
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return kindOther, false, nil
		}
		switch {
		case has(n.sem.Leases):
			return kindPermits, false, nil
		case byEntries != "":
			return byEntries, false, nil
		case has(n.sem.Grants):
			return kindSemaphore, false, nil
		}
		subs, err := subscribers(ctx, c, []string{n.sem.Channel, n.latchChannel}, self)
		if err != nil {
			return "", false, c.keyErr(name, err)
		}
		switch {
		case subs[n.sem.Channel] > 0:
			return kindSemaphore, false, nil
		case subs[n.latchChannel] > 0:
			return kindLatch, false, nil
		}
		bare = !has(n.sem.Queue) && !has(n.sem.Listeners) && !has(n.sem.Turn)
		return kindCounter, bare, nil
	case "none":
		switch {
		case has(n.lock.Queue):
			return kindMutex, false, nil
		case fair: // queued for, or free with its counter left from earlier holds
			return kindFairLock, false, nil
		case has(n.rw.Writers):
			return kindRWLock, false, nil
		case has(n.sem.Leases):
			return kindPermits, false, nil
		case byEntries != "":
			return byEntries, false, nil
		// Free, its fencing counter left from earlier holds.
		case has(n.lock.Token):
			return kindMutex, false, nil
		case has(n.rw.Token):
			return kindRWLock, false, nil
		}
		return kindNone, false, nil
	}
	return kindOther, false, nil
}

// maxEntries bounds how many semaphore queue entries detect reads to tell
// a semaphore's from a permit semaphore's.
const maxEntries = 16

// entriesKind tells the kind of a semaphore from latchkey's queue entries:
// a permit semaphore's are <hub id>/<permit ids in hex>, a semaphore's
// <hub id>/<permits>/<key>; Redisson's place in line ("redisson") tells
// nothing. It returns "" when no entry tells.
func entriesKind(entries []string) string {
	for _, e := range entries {
		_, rest, ok := strings.Cut(e, "/")
		if !ok {
			continue
		}
		if _, err := hex.DecodeString(rest); err == nil && len(rest) > 0 && len(rest)%32 == 0 {
			return kindPermits
		}
		if ps, _, ok := strings.Cut(rest, "/"); ok {
			if _, err := strconv.ParseInt(ps, 10, 64); err == nil {
				return kindSemaphore
			}
		}
	}
	return ""
}

// lockFields reports whether every field of the hash name is an owner id
// with an integer hold count, as in a Redisson lock.
func lockFields(ctx context.Context, c *conn, name string) (bool, error) {
	m, err := c.client.HGetAll(ctx, name).Result()
	if err != nil {
		return false, err
	}
	for f, v := range m {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil || !ownerShaped(f) {
			return false, nil
		}
	}
	return true, nil
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
