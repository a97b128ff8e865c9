// Package mutex provides a reentrant distributed mutual-exclusion lock backed
// by Redis, wire-compatible with Redisson's RLock and RFencedLock.
//
// A Mutex handle is safe for concurrent use. Goroutines that share a handle
// exclude each other exactly like goroutines sharing a sync.Mutex, and any
// goroutine may Unlock the handle's current plain hold. Reentrancy is opt-in:
// a context marked with latchkey.WithOwner is one owner, like a Java thread
// in Redisson, and may Lock again while it holds the lock; each Lock then
// needs an Unlock with that owner.
//
// Without WithLease, a held lock is kept alive by a watchdog that renews it
// every third of the watchdog timeout (30s by default), so a crashed
// process's lock expires within that timeout. With WithLease the lock
// expires after the lease, renewed by nobody. Either way, a hold that ends
// without Unlock (expired, deleted, force-unlocked) is never silent: the
// handle's Done channel closes, Err reports latchkey.ErrLost and Unlock
// returns latchkey.ErrNotHeld. Every acquisition also returns a fencing
// token that strictly increases per lock name, so a resource can reject a
// writer whose hold was lost.
//
// A lock held by a Redis key with a TTL is mutual exclusion only while the
// holder keeps its lease; use the fencing token where that matters.
//
// Waiters do not poll. A waiter that finds the lock held joins a queue kept
// beside the lock and sleeps. A release tells the first waiter in line (one
// message to its client's pub/sub Hub) and keeps the free lock for it for a
// short grace (100ms), so that waiters in other clients do not all try at
// once and a newcomer does not take its turn; a first waiter that died
// costs at most the grace. Releases by Redisson clients, which know nothing
// of the queue, are heard on Redisson's shared channel: a queued waiter
// counts them and tries when its turn may have come. The holder's TTL, and
// at most 5s, bound every sleep, so a lost message costs time, never
// progress. The queue only orders latchkey's waiters: a stale entry (a
// waiter that died, or clocks that disagree) costs order, never safety.
//
// Redis keys for a lock named N. Redisson's:
//
//	N                            hash {<uuid>:<n>: hold count}, TTL = lease
//	redisson_lock_token:{N}      fencing counter (RFencedLock), no TTL
//	redisson_lock__channel:{N}   unlock channel, message "0"
//
// and latchkey's own, which Redisson clients ignore:
//
//	latchkey_lock_queue:{N}          list of waiters, in order of arrival
//	latchkey_lock_timeout:{N}        zset of waiter deadlines (client clock, ms)
//	latchkey_lock_grant:{N}          the waiter a released lock is kept for
//	latchkey_lock__channel:{N}:<hub> a Hub's channel, message "0"
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
package mutex
