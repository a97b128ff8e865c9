package main

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/latchkey/latchkey/internal/keys"
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

// entriesKind tells the kind of a semaphore from latchkey's queue entries:
// both are <hub id>/<permits>/<key>, the key of a permit semaphore's being
// its first permit's id, 32 hex characters, and a semaphore's a call id
// (<client id>:<n>); before, a permit semaphore's were <hub id>/<permit
// ids in hex>. Redisson's place in line ("redisson") tells nothing. It
// returns "" when no entry tells.
func entriesKind(entries []string) string {
	for _, e := range entries {
		if old, ok := keys.ParseEntry(e, false); ok && permitIDs(old.Key) {
			return kindPermits
		}
		if se, ok := keys.ParseEntry(e, true); ok {
			if permitIDs(se.Key) && len(se.Key) == 32 {
				return kindPermits
			}
			return kindSemaphore
		}
	}
	return ""
}

// permitIDs reports whether s is permit ids in hex, 32 characters each.
func permitIDs(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) > 0 && len(s)%32 == 0
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
	case strings.HasPrefix(key, keys.LatchkeyPrefix), strings.HasPrefix(key, keys.RedissonPrefix):
		return true
	case strings.Contains(key, ":"+keys.ReadTimeoutsSuffix+":"):
		return true
	case strings.HasSuffix(key, ":"+keys.LeasesSuffix) && strings.Contains(key, "{"):
		return true // {N}:timeout, a permit semaphore's leases
	}
	return false
}
