// Package semaphore provides a counting semaphore backed by Redis,
// wire-compatible with Redisson's RSemaphore.
//
// A Semaphore is a number of permits stored under one Redis key. Acquire
// takes n permits, blocking until n are available; Release gives n back.
// Like golang.org/x/sync/semaphore.Weighted, and unlike a mutex, permits
// have no owner: any goroutine or process may release permits, including
// ones it never acquired, and releasing more than was acquired raises the
// count.
//
// Waiters are served in order, as by golang.org/x/sync/semaphore: the
// waiters of every latchkey client queue beside Redisson's key (each once
// its client's pub/sub Hub listens for it), and a
// waiter for n permits waits for those ahead of it while those behind it
// wait for it, so that a waiter for many permits is not starved by
// waiters for few. A single attempt (TryAcquire with no wait) fails while
// others wait. Redisson clients know nothing of the queue: they take
// permits that the queue leaves in the count, and may overtake latchkey
// waiters or be overtaken by them, as Redisson's semaphore is not fair.
//
// Because permits have no owner, nothing gives back the permits of a
// holder that crashes or loses its connection: they are gone until someone
// calls Release or AddPermits (Redisson issues #2045 and #2213). When
// holders may die, use package permitsemaphore, whose permits have ids and
// leases and return to the pool when their lease ends.
//
// For the same reason a request cut off by a network or Redis failure
// cannot be undone exactly: an Acquire whose reply is lost may have taken
// its permits, which are then gone like a crashed holder's, and a Release
// that fails may or may not have given them back. (A cancelled ctx is not
// such a failure: Acquire waits for its request's reply and gives back
// what it got.) go-redis itself resends a request whose connection broke
// or timed out (Options.MaxRetries), which can apply it twice; where an
// exact count matters, set MaxRetries to -1 on the semaphore's client.
//
// Waiters do not poll, and a release wakes no herd. A release (or
// AddPermits, SetPermits, TrySetPermits, or a waiter leaving the head of
// the queue) hands the permits it frees to the waiters at the head of the
// queue, in order, in the same server call: the permits come off the
// count, as if those waiters had acquired them, and a letter on the pub/sub
// channel of each one's client tells it. Nobody else is woken. Redisson's
// message, the permits now available after that, still goes out on
// Redisson's channel. A granted waiter takes its grant with one more round
// trip, and its Acquire returns only once the server answered that the
// grant was still there: permits granted to a waiter that died, or whose
// client missed the letter, go back to the pool or to the next waiter
// after a grace of 1s, and a waiter that comes for its grant later than
// that (a pause of the process, a slow network) finds it gone and waits
// on, queued again. Acquire never returns permits that may be in use by
// another.
//
// Permits are never parked with a waiter that gave up. The waiter's client
// hands back a grant to it as the waiter leaves, off the caller's path,
// and latchkey.Close hands back at once what such a hand-back did not get
// to (a broken connection), taking the client's waiters out of the queue.
// A grant nobody takes within the grace is back in the count that every
// reader sees, Redisson's included, within about a round trip more, for
// the client whose call made the grant gives it back then, as long as it
// lives (within 0.1s more if that client has just released on the
// semaphore: its next release gives it back first); AvailablePermits
// counts it as available from the end of the grace, whoever lives.
//
// A Redisson client's release only adds to the count and publishes it: it
// hands nothing to the queue. The latchkey waiter at the head of the
// queue therefore also listens on Redisson's channel, tries again when a
// message there says that enough permits for it are available, and hands
// what it leaves to those behind it; waiters behind it ignore those
// messages, and latchkey's own releases leave none that the queue could
// use. Pub/sub may
// lose a message on a failure; a waiter then looks again within a few
// seconds anyway, where Redisson's acquire would hang.
//
// Redisson's waiters are not starved by the grant: they have a place in
// the queue. A release counts the clients that heard its message on
// Redisson's channel, and latchkey's own Hubs among them: those of queued
// waiters and of grants not taken yet, and those that latchkey's calls
// noted as listening lately (a Hub stays subscribed for its linger after
// its last waiter left). A listener beyond those is a Redisson client
// waiting, and an entry that stands for Redisson's waiters joins the tail
// of the queue. When that entry heads the queue, and permits are free and
// a Redisson client still listens, the next release grants nothing: it
// publishes the permits available and leaves them to Redisson's woken
// waiters for 10ms (handoff.Yield), during which no latchkey caller takes
// any; the waiter behind is told that its turn comes after. So a Redisson
// waiter that can use the permits a release frees waits about as many
// grants as latchkey waiters were queued when it was heard, as a latchkey
// waiter would, and latchkey's waiters keep their order and, when no
// Redisson client waits, their one-trip handoff. A Redisson waiter for
// more permits than are free at its turn is not helped: its turn passes
// unused. Anyone else subscribed to Redisson's channel by name counts as
// a Redisson waiter (a pattern subscription does not), costing latchkey's
// waiters a 10ms turn once per pass of the queue. On a Redis Cluster
// without sharded pub/sub the server cannot count every listener, so
// Redisson's waiters get no place, and may wait as long as latchkey's
// waiters keep the semaphore busy: use sharded pub/sub there (Redis 7).
//
// Delete ends a semaphore, as Redisson's delete does, and more: it deletes
// the count and every key latchkey keeps beside it, and every Acquire
// waiting in the queue, in any latchkey process, fails with an error
// matching latchkey.ErrDeleted instead of waiting for permits that may never
// come. Expire, TTL and TrySetPermitsTTL give a semaphore a time to live, as
// Redisson's RExpirable and trySetPermits with a TTL do. The permits granted
// to waiters and not taken yet live exactly as long as the count, so that
// none comes back into a semaphore set anew after it expired, and none is
// lost while it lives; the waiter queue lasts as long as its waiters, and
// only Expire also sets it to expire.
//
// Redis keys, as Redisson lays them out for a semaphore named N:
//
//	N                  string, the number of available permits (may be negative)
//	redisson_sc:{N}    channel, message: the new number of available permits
//
// and latchkey's beside them, which Redisson clients ignore:
//
//	latchkey_semaphore_queue:{N}         list, the waiters in order
//	latchkey_semaphore_timeout:{N}       zset, waiter -> when its entry lapses
//	                                     unless it attempts again
//	latchkey_semaphore_grant:{N}         zset, permits granted and not yet
//	                                     confirmed -> end of their grace
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
package semaphore
