// Package fairlock provides a reentrant distributed lock backed by Redis
// that is granted in first-come, first-served order, wire-compatible with
// Redisson's RFairLock.
//
// A Mutex has the API and the ownership model of package mutex: a handle is
// safe for concurrent use, goroutines sharing it exclude each other like
// goroutines sharing a sync.Mutex, reentrancy is opt-in through an owner
// carried by the context (latchkey.WithOwner), a hold is kept alive by the
// watchdog or given a fixed lease (WithLease), and a hold that ends without
// Unlock closes the handle's Done channel.
//
// # Fencing
//
// As with a mutex.Mutex, every hold taken through latchkey has a fencing
// token (Token) that strictly increases per lock name, however the hold
// began: a first try, a queued waiter's attempt, or a release's grant to
// the first waiter, whose letter carries the token drawn for it. A
// re-entry draws the next token too, as a mutex's does (and Redisson's
// RFencedLock), and Token reports the newest. Redisson's fair lock keeps
// no token, so the counter is latchkey's own, beside Redisson's keys (not
// the mutex's, which is RFencedLock's), and a Redisson client's holds draw
// none. A counter lost to a restart starts again from the server's clock
// in microseconds, above every token handed out before.
//
// # Order
//
// A caller that cannot take the lock at once joins a queue in Redis, and
// the lock goes to the first caller in the queue. A release by a latchkey
// holder grants the lock to the first waiter in the same script, if that
// waiter is a latchkey one: it holds the lock (for the grace, 1s, which
// it then extends to its own lease) and is told by a message to its
// client's pub/sub Hub, so that its Lock returns without another round
// trip. The waiter behind it is told too, and tries once the grace is over
// should the grant never be taken, so a waiter that died or missed its
// message costs at most the grace. A Redisson waiter first in line is
// woken on its own channel, as Redisson's unlock wakes it. A caller that
// arrives while the lock is free but others are queued joins the tail.
// TryLock with no wait succeeds only when the lock is free and nobody is
// queued.
//
// # Queue deadlines
//
// The queue keeps Redisson's rules, so that Redisson and latchkey waiters
// can share it in one order. Each waiter has a deadline, set once when it
// joins: the deadline of the waiter before it, or when there is none the
// time the holder's lease runs out, plus the wait timeout (WithWaitTimeout,
// Redisson's fairLockWaitTimeout, 5 minutes by default). Each acquisition
// brings every deadline one wait timeout closer, and so does a waiter that
// leaves for those behind it, so the first waiter's deadline stays about a
// wait timeout after the lock was expected to be free. A first waiter whose
// deadline has passed is skipped: a Redisson waiter that crashed, or a live
// waiter of either kind whose turn is late because the holders since it
// queued held the lock for more than a wait timeout each, on average; a
// live one queues again at the tail, as it would in Redisson. No deadline
// is ever changed otherwise.
//
// # Liveness
//
// latchkey adds a heartbeat for its own waiters. A queued latchkey waiter
// renews it to now + the liveness timeout (WithLivenessTimeout, 5s by
// default) at each attempt, in a key of its own beside Redisson's. Its
// attempts are bounded: it sleeps until it is woken, and at most a third of
// the liveness timeout, which is therefore the longest it sleeps without a
// wake-up; it is a heartbeat, not a poll. So a live waiter is never taken
// for a dead one however long it waits, while a latchkey waiter that crashed
// is skipped, wherever it is in the queue, a liveness timeout after its last
// attempt, as soon as a latchkey client touches the lock after that: the
// latchkey waiters behind a dead first waiter sleep until then, not longer.
// Its leaving brings the deadlines behind it closer as if it had given up. A
// crashed Redisson waiter has no heartbeat, and is skipped at its deadline,
// as in Redisson. A waiter whose Lock is cancelled, or whose TryLock runs
// out of time, leaves the queue at once.
//
// The first waiter sleeps at most until the holder's lease runs out, so a
// crashed holder's lock passes on as soon as it expires. Whenever the first
// place changes hands other than by taking the lock (the first waiter left
// or was skipped), the new first waiter is woken, so it takes a free lock
// at once or sleeps on the holder's lease; it is also woken when the waiter
// ahead takes the lock, if it is a Redisson waiter (which sleeps on the
// lease it last saw) or the lease is shorter than the heartbeat. A latchkey
// waiter that is not first never retries sooner than its bound, even while
// the lock is free and the first waiter has yet to take it: no latchkey
// waiter polls.
//
// # Compared with Redisson
//
// Redisson clients may share a lock with latchkey clients: both take,
// queue, skip and wake on the same keys and channels by the same rules,
// and waiters of both kinds are served in the order they joined the queue,
// provided every client of the lock uses the same wait timeout. What
// latchkey adds is for its own waiters: a dead latchkey waiter is skipped
// within its liveness timeout instead of up to its deadline (a Redisson
// client alone never skips it sooner, since it does not read the
// heartbeats), a latchkey release hands the lock to a latchkey waiter
// first in line in one trip, and a latchkey waiter behind a first waiter
// that is slow to take the free lock sleeps instead of retrying at once as
// Redisson's do. A latchkey waiter listens on its client's Hub channel,
// and on Redisson's channel of its own only while a Redisson client holds
// the lock or waits ahead of it (latchkey's owner ids are version 8 UUIDs,
// Redisson's version 4): only Redisson's scripts publish there then.
// Deadlines are client wall-clock times, as in Redisson, so all clients'
// clocks must agree, to well within a third of the liveness timeout.
//
// Redisson's fair unlock reports success when the lock key is gone.
// latchkey's Unlock reports latchkey.ErrNotHeld, as for every lock, and
// like Redisson still wakes the first waiter if the lock is free.
//
// Redis keys and channels, as Redisson lays them out for a lock named N:
//
//	N                                   hash {<uuid>:<n>: hold count}, TTL = lease
//	redisson_lock_queue:{N}             list of waiting owners, first waiter first
//	redisson_lock_timeout:{N}           zset {owner: deadline in Unix ms}
//	redisson_lock__channel:{N}:<owner>  one waiter's wake-up channel, message "0"
//
// and latchkey's own, which Redisson clients neither read nor write:
//
//	latchkey_lock_heartbeat:{N}         zset {<owner>/<hub id>: heartbeat deadline in Unix ms}
//	latchkey_lock_grant:{N}             the waiter a release granted the lock to, until taken
//	latchkey_lock_token:{N}             the fencing counter: the latest token drawn,
//	                                    TTL = a day from its start and every 256th token
//	latchkey_lock__channel:{N}:<hub>    a Hub's channel, letters "@<owner> <body>"
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
// Any string is a name; those that a Redis Cluster cannot serve, and the
// error their calls return there, are in the package latchkey doc on names.
package fairlock
