// Package semaphore provides a counting semaphore backed by Redis,
// wire-compatible with Redisson's RSemaphore.
//
// A Semaphore is a number of permits stored under one Redis key. Acquire
// takes n permits, blocking until n are available; Release gives n back and
// wakes waiters. Like golang.org/x/sync/semaphore.Weighted, and unlike a
// mutex, permits have no owner: any goroutine or process may release
// permits, including ones it never acquired, and releasing more than was
// acquired raises the count. The semaphore is not fair: a waiter for many
// permits can be overtaken by waiters for fewer.
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
// Waiters do not poll. A release publishes the new number of available
// permits on the semaphore's channel, and the process's pub/sub Hub wakes
// the local waiters that many permits may satisfy: a release of k permits
// wakes waiters for k permits in all (a waiter for 3 counts as 3), not
// every waiter and not just one. Pub/sub may lose a message on a failure; a
// waiter then looks again within a few seconds anyway, where Redisson's
// acquire would hang.
//
// Redis keys, as Redisson lays them out for a semaphore named N:
//
//	N                  string, the number of available permits (may be negative)
//	redisson_sc:{N}    channel, message: the new number of available permits
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
package semaphore
