// Package fairlock provides a reentrant distributed lock backed by Redis
// that is granted in first-come, first-served order, wire-compatible with
// Redisson's RFairLock.
//
// A Mutex has the API and the ownership model of package mutex: a handle is
// safe for concurrent use, goroutines sharing it exclude each other like
// goroutines sharing a sync.Mutex, reentrancy is opt-in through an owner
// carried by the context (latchkey.WithOwner), a hold is kept alive by the
// watchdog or given a fixed lease (WithLease), and a hold that ends without
// Unlock closes the handle's Done channel. Unlike a mutex.Mutex it has no
// fencing token: Redisson's fair lock keeps none.
//
// # Order
//
// A caller that cannot take the lock at once joins a queue in Redis, and
// the lock goes to the first caller in the queue: when it is released, only
// that waiter is woken, on a channel of its own. A caller that arrives while
// the lock is free but others are queued joins the tail. TryLock with no
// wait succeeds only when the lock is free and nobody is queued.
//
// # Liveness
//
// A queued waiter holds its place by a deadline in Redis, which it renews
// to now + the wait timeout (WithWaitTimeout, 5s by default) at each
// attempt. Its attempts are bounded: it sleeps until it is woken, and at
// most a third of the wait timeout, which is therefore the longest anyone
// sleeps without a wake-up; it is a liveness heartbeat, not a poll. So a
// live waiter keeps its place however long it waits, while a waiter that
// crashed is skipped at the latest a wait timeout after its last attempt,
// as soon as anyone touches the lock after that. Waiters behind a dead
// first waiter sleep until its deadline, not longer. A waiter whose Lock
// is cancelled, or whose TryLock runs out of time, leaves the queue at once.
//
// The first waiter sleeps at most until the holder's lease runs out, so a
// crashed holder's lock passes on as soon as it expires. Whenever the first
// place changes hands other than by taking the lock (the first waiter left
// or was skipped), the new first waiter is woken, so it takes a free lock
// at once or sleeps on the holder's lease; it is also woken when the waiter
// ahead takes the lock with a lease shorter than the heartbeat. A waiter
// that is not first never retries sooner than its bound, even while the
// lock is free and the first waiter has yet to take it: no waiter polls.
//
// # Compared with Redisson
//
// Redisson gives each waiter a deadline of the previous waiter's deadline
// plus fairLockWaitTimeout (5 minutes) once, on arrival, and brings every
// deadline that much closer when the queue advances; a crashed waiter
// then stalls the queue for up to 5 minutes, and a live waiter that waits
// longer than its deadline loses its place. latchkey waiters renew their
// own deadlines instead and never shift anyone else's; waiters whose
// deadline has passed are removed wherever they are in the queue (Redisson
// removes them only from its head).
//
// Redisson's fair unlock reports success when the lock key is gone.
// latchkey's Unlock reports latchkey.ErrNotHeld, as for every lock, and
// like Redisson still wakes the first waiter if the lock is free.
//
// Redisson clients may share a lock with latchkey clients: both take,
// queue, skip and wake on the same keys and channels in the same way. A
// Redisson client that takes the lock brings every deadline closer by its
// own wait time, which may put latchkey waiters' deadlines in the past;
// such a waiter may then be skipped and queues again at the tail at its
// next attempt. Mutual exclusion and progress hold in a mixed queue; strict
// order holds among latchkey clients. All clients' clocks must agree to
// well within a third of the wait timeout, since deadlines are client
// wall-clock times, as in Redisson.
//
// Redis keys and channels, as Redisson lays them out for a lock named N:
//
//	N                                   hash {<uuid>:<n>: hold count}, TTL = lease
//	redisson_lock_queue:{N}             list of waiting owners, first waiter first
//	redisson_lock_timeout:{N}           zset {owner: deadline in Unix ms}
//	redisson_lock__channel:{N}:<owner>  one waiter's wake-up channel, message "0"
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
package fairlock
