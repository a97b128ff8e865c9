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
// expires after the lease unless its holder calls Extend; Deadline tells
// how long the current hold is known to be valid. Either way, a hold that
// ends without Unlock (expired, deleted, force-unlocked) is never silent: the
// handle's Done channel closes, Err reports latchkey.ErrLost and Unlock
// returns latchkey.ErrNotHeld. Every acquisition also returns a fencing
// token that strictly increases per lock name, so a resource can reject a
// writer whose hold was lost.
//
// A lock held by a Redis key with a TTL is mutual exclusion only while the
// holder keeps its lease; use the fencing token where that matters.
//
// Waiters do not poll. A waiter that finds the lock held joins a queue kept
// beside the lock, as soon as its client's pub/sub Hub listens for it (a
// release takes a head of the queue that nobody hears for gone), and
// sleeps. A release hands the lock to the first waiter
// in line in the same script: that waiter becomes the holder, with a fresh
// fencing token and a short lease (the grace, 1s), and a message to its
// client's pub/sub Hub tells it so, so that its Lock returns without
// another round trip; it then extends the lease to its own, off Lock's
// path (a hold released within 200ms needs no extension). The waiter next
// in line is told too, and tries once the grace is over should the lock
// never be taken: a waiter that died or missed its message costs at most
// the grace. So a release wakes at most two waiters, whatever the number
// of clients waiting, and a newcomer never takes a queued waiter's turn.
//
// Redisson clients know nothing of the queue: to them a granted lock is
// held by an ordinary owner. A Redisson holder's release grants nothing;
// while a waiter finds a Redisson holder (latchkey's owner ids are version
// 8 UUIDs, Redisson's version 4), it counts the releases on Redisson's
// shared channel and tries when its turn may have come. The holder's TTL,
// and at most 5s, bound every sleep, so a lost message costs time, never
// progress. The queue only orders latchkey's waiters: a stale entry (a
// waiter that died, or clocks that disagree) costs order, never safety.
//
// Redisson's waiters are not starved by the grant: they have a place in
// the queue. A release publishes "0" on Redisson's channel first; when
// anyone heard it while latchkey's waiters queue, a Redisson client may be
// waiting, and an entry that stands for Redisson's waiters joins the tail
// of the queue. When that entry heads the queue and the release's "0" was
// heard, the release grants nothing: it leaves the lock free and tells the
// next latchkey waiter that its turn comes after a short yield (10ms,
// handoff.Yield), during which Redisson's woken waiter takes the lock if
// it is there; no other latchkey caller may take it before that waiter.
// So a Redisson waiter waits about as many handoffs as latchkey waiters
// were queued when it was heard, as a latchkey waiter would, while
// latchkey's waiters keep their order among themselves; when no Redisson
// client waits, they keep their one-trip handoff. A latchkey waiter
// listens on Redisson's channel too while a Redisson client holds, and
// for a second after (its Hub lingers): a release meanwhile may give
// Redisson's entry a place for nobody, costing one yield. On a Redis
// Cluster without sharded pub/sub, PUBLISH counts only the subscribers of
// the node that ran it, so a Redisson client subscribed through another
// node (Redisson subscribes through replicas by default) goes unseen, and
// may wait as long as latchkey's waiters keep the lock busy: use sharded
// pub/sub there.
//
// Redis keys for a lock named N. Redisson's:
//
//	N                            hash {<uuid>:<n>: hold count}, TTL = lease
//	redisson_lock_token:{N}      fencing counter (RFencedLock), TTL = a day
//	                             from its start and from every 256th token
//	redisson_lock__channel:{N}   unlock channel, message "0"
//
// and latchkey's own, which Redisson clients ignore:
//
//	latchkey_lock_queue:{N}          list of waiters, in order of arrival
//	latchkey_lock_timeout:{N}        zset of waiter deadlines (client clock, ms)
//	latchkey_lock_grant:{N}          the waiter a release granted the lock to,
//	                                 or whose turn it is at the free lock
//	latchkey_lock__channel:{N}:<hub> a Hub's channel, letters "@<waiter> <body>"
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
// Any string is a name; those that a Redis Cluster cannot serve, and the
// error their calls return there, are in the package latchkey doc on names.
package mutex
