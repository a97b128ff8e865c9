// Package permitsemaphore provides a counting semaphore backed by Redis
// whose permits have ids and leases, wire-compatible with Redisson's
// RPermitExpirableSemaphore.
//
// Acquire takes a permit and returns it as a *Permit with a random id; only
// that id releases it, from any goroutine or process (pass Permit.ID
// along). A permit acquired with a lease returns to the pool by itself when
// the lease ends, so the permits of a holder that crashes come back without
// anyone releasing them, which a plain semaphore (package semaphore) cannot
// do. Forever (the zero Lease) makes a permanent permit, released only by
// its id; a negative lease, or one below latchkey.MinLease (10ms), is an
// error matching latchkey.ErrInvalidLease, never a permanent permit, and so
// is one above latchkey.MaxLease (292 years).
// UpdateLeaseTime and Permit.Extend reset a permit's lease while it is
// held. Releasing or extending a permit whose lease ended, or one never
// acquired, fails with latchkey.ErrNotHeld.
//
// A permit whose work may outlast any lease chosen in advance can be kept
// alive instead (Permit.KeepAlive): the client's watchdog, the one that
// renews its locks, resets the permit's lease every third of it, so that
// a short lease bounds how long a dead holder keeps the permit from others
// while a live holder keeps it as long as it works. Loss is never silent,
// as for a lock: if the permit is found gone, or cannot be renewed in
// time, Permit.Done closes and Permit.Err returns an error matching
// latchkey.ErrLost that says why.
//
// Leases end by the holders' wall clocks, as in Redisson: a permit's
// expiry is stored as a Unix time in milliseconds computed by the client
// that acquired it, so every client of a semaphore needs a synchronised
// clock. An expired permit is returned lazily, by the next operation of any
// client on the semaphore; a waiter blocked in Acquire sleeps at most until
// the earliest lease ends and then takes the permit, even if nothing is
// published.
//
// Waiters are served in order: the waiters of every latchkey client queue
// beside Redisson's keys (each once its client's pub/sub Hub listens for
// it), and a waiter for n permits (AcquireN) waits for
// those ahead of it while those behind it wait for it, so that a waiter
// for many permits is not starved by waiters for few. A single attempt
// (TryAcquire with no wait) fails while others wait. Redisson clients know
// nothing of the queue: they take permits that the queue leaves in the
// count, and may overtake latchkey waiters or be overtaken by them, as
// Redisson's semaphore is not fair.
//
// Waiters do not poll, and a release wakes no herd. A release (or
// AddPermits, SetPermits, TrySetPermits, permits whose lease ended, or a
// waiter leaving the head of the queue) hands the permits it frees to the
// waiters at the head of the queue, in order, in the same server call: it
// acquires their permits for them, by the ids their Acquire chose, and a
// letter on the pub/sub channel of each one's client tells it. Nobody else
// is woken. Redisson's message still goes out on Redisson's channel, with
// the count the queue left. Granted permits have a lease of 1s until
// the granted waiter takes them with one more round trip, setting the
// lease its Acquire asked for; Acquire returns only once the server
// answered that they were still held for it. The permits of a waiter that
// died, or whose client missed the letter, expire after that grace as any
// others do, and a waiter that comes for them later than that finds them
// gone and waits on, queued again. They are never parked: a waiter's
// client gives back a grant to it as the waiter gives up, latchkey.Close
// at once what that did not get to, and the client whose call granted them
// puts them back in the count, the plain integer a Redisson client reads,
// once their grace is over, as long as it lives. A Redisson client's release, or an
// expiry that a Redisson client finds, hands nothing to the queue: the
// waiter at its head listens on Redisson's channel and tries again when a
// message says that permits came back, and hands what it leaves to those
// behind it. A lost message costs a waiter a few seconds at most.
//
// Redisson's waiters are not starved by the grant: they have a place in
// the queue, and at their turn a release leaves the permits to them for
// 10ms, as in package semaphore (its doc says how a release tells that a
// Redisson client waits, what each side can expect, and where a cluster
// cannot tell).
//
// Delete ends a semaphore: it deletes the count, the permits held and every
// key latchkey keeps beside them, and every Acquire waiting in the queue, in
// any latchkey process, fails with an error matching latchkey.ErrDeleted
// instead of waiting for permits that may never come. Expire, TTL and
// TrySetPermitsTTL give a semaphore a time to live, as Redisson's RExpirable
// and trySetPermits with a TTL do: the permits held live exactly as long as
// the count (Redisson copies the count's TTL to them when a permit is
// acquired; latchkey keeps them equal whatever changes it), and the waiter
// queue lasts as long as its waiters, unless Expire sets it to expire too.
//
// Redis keys, as Redisson lays them out for a semaphore named N:
//
//	N                  string, the number of available permits (may be negative)
//	{N}:timeout        zset, permit id (16 raw bytes) -> lease end in Unix ms,
//	                   or 922337203685477 for a permanent permit
//	redisson_sc:{N}    channel, message: a count of permits that came back
//
// and latchkey's beside them, which Redisson clients ignore (the same as
// package semaphore's):
//
//	latchkey_semaphore_queue:{N}         list, the waiters in order
//	latchkey_semaphore_timeout:{N}       zset, waiter -> when its entry lapses
//	                                     unless it attempts again
//	latchkey_semaphore__channel:{N}:<id> channel of the Hub <id>: grants'
//	                                     letters to its waiters
//	latchkey_semaphore_listeners:{N}     zset, Hub id -> until when it may
//	                                     listen on Redisson's channel
//	latchkey_semaphore_turn:{N}          string, set while a release leaves
//	                                     the permits to Redisson's waiters
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
// Any string is a name; those that a Redis Cluster cannot serve, and the
// error their calls return there, are in the package latchkey doc on names.
package permitsemaphore
