// Package rwlock provides a reentrant distributed reader/writer lock backed
// by Redis, wire-compatible with Redisson's RReadWriteLock.
//
// Any number of readers may hold an RWMutex at once, or a single writer.
// Readers never wait for one another, nor for a writer that is only waiting
// (as in Redisson, a steady stream of readers can starve writers). An
// RWMutex handle is safe for concurrent use, and goroutines that share one
// behave as with a shared sync.RWMutex: every plain RLock is a reader of
// its own, a plain Lock waits for all of them, and any goroutine may
// release the handle's plain holds.
//
// Reentrancy is opt-in: a context marked with latchkey.WithOwner is one
// owner, like a Java thread in Redisson. That owner may RLock and Lock
// again while it holds the lock, each call needing its own release. Its
// writer may also take read holds; after its write Unlock it still holds
// them, so the lock is downgraded from write to read without a gap. The
// reverse, an owner holding only read asking for write, would wait for
// itself forever in Redisson; here Lock returns latchkey.ErrWouldDeadlock
// at once. Without an owner in ctx there is no such detection: a plain Lock
// waits for the handle's plain readers, as sync.RWMutex's Lock does.
//
// Without WithLease, holds are kept alive by a watchdog that renews this
// process's holds, and only those, every third of the watchdog timeout
// (30s by default); a crashed process's holds expire within that timeout,
// even while other processes keep reading. With WithLease each hold
// expires after the lease, renewed by nobody. A hold that ends without an
// unlock is never silent: Done closes, Err reports latchkey.ErrLost, and
// the unlock returns latchkey.ErrNotHeld.
//
// Waiters do not poll: they sleep until an unlock message arrives on the
// lock's channel, or until the holders' TTL runs out. A write unlock wakes
// every waiter, so that all blocked readers enter at once.
//
// ReadLock and WriteLock return the two sides as locks with Lock, TryLock
// and Unlock methods of their own (Redisson's readLock and writeLock), for
// code that takes any lock, such as a multilock.
//
// Redis keys, as Redisson lays them out for a lock named N:
//
//	N                                    hash: mode = read|write,
//	                                     <uuid>:<n> = read holds,
//	                                     <uuid>:<n>:write = write holds;
//	                                     TTL = the longest lease of any hold
//	{N}:<uuid>:<n>:rwlock_timeout:<i>    one per read hold i, TTL = its lease
//	redisson_rwlock:{N}                  channel: "0" after a read unlock
//	                                     frees the lock, "1" (wake all)
//	                                     after a write unlock
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
//
// Values of type RWMutex must not be copied after first use.
package rwlock
