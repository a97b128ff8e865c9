// Package rwlock provides a reentrant distributed reader/writer lock backed
// by Redis, wire-compatible with Redisson's RReadWriteLock.
//
// Any number of readers may hold an RWMutex at once, or a single writer.
// Readers never wait for one another. An RWMutex handle is safe for
// concurrent use, and goroutines that share one behave as with a shared
// sync.RWMutex: every plain RLock is a reader of its own, a plain Lock
// waits for all of them, and any goroutine may release the handle's plain
// holds.
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
// Writers are preferred, as in sync.RWMutex: once a latchkey writer waits,
// new latchkey readers wait behind it, so that a steady stream of readers
// cannot starve writers (Redisson has no such rule). The readers holding
// the lock when the writer came finish, then the writer has it. Nor can a
// stream of writers starve readers: the readers held back before a write
// Unlock enter after it, even if another writer waits by then; only the
// readers that come later wait behind that one. An owner that already
// holds a read (or the write) lock still re-enters its reads at once, so it
// never waits for a writer that waits for it; a plain read hold cannot be
// re-entered, and a goroutine that nests plain RLocks may deadlock with a
// waiting writer, as with sync.RWMutex.
//
// A waiting writer announces itself in a key of latchkey's beside
// Redisson's, with a deadline a second away that each of its attempts
// renews: a writer that dies while waiting holds readers back for at most
// that long, and one that gives up (its context ends, its TryLock wait runs
// out) lets them in at once. Redisson's clients know nothing of it: a Java
// reader enters beside latchkey readers while a latchkey writer waits, and
// the writer waits for it as for any reader. A Java writer's unlock lets
// no reader ahead of a latchkey writer that waits by then.
//
// Java and Go waiters share the lock as Redisson clients do: an unlock
// grants nothing, and wakes the waiters of both sides, who race for it. A
// Java writer among latchkey writers that keep the lock busy waits about
// as many holds as among Redisson writers, and a Java reader about as many
// (a few: see TestRWMutex_redissonWriterServed and
// TestRWMutex_redissonReaderServed). Latchkey's readers hold back only
// for latchkey's writers, so a stream of overlapping readers, of either
// side, can hold off a Java writer, as Redisson's readers do.
//
// Without WithLease, holds are kept alive by a watchdog that renews this
// process's holds, and only those, every third of the watchdog timeout
// (30s by default); a crashed process's holds expire within that timeout,
// even while other processes keep reading. With WithLease each hold
// expires after the lease, renewed by nobody. A hold that ends without an
// unlock is never silent: the side's Done closes, its Err reports
// latchkey.ErrLost, and the unlock returns latchkey.ErrNotHeld.
//
// Every write hold taken through latchkey has a fencing token
// (WriteLock.Token), as a mutex.Mutex's hold has: it strictly increases
// per lock name with every write acquisition, a re-entry's too, in any
// process, and a counter lost to a restart starts again from the server's
// clock in microseconds, above every token handed out before. Redisson's
// read-write lock keeps no token, so the counter is latchkey's own, beside
// Redisson's keys, and a Redisson client's write holds draw none. A read
// hold has no token: readers hold together, so no number could tell a
// stale reader from a live one; code that writes what the lock guards
// takes the write lock, whose token fences those writes.
//
// Waiters do not poll: they sleep until an unlock message arrives on the
// lock's channel, or until the holders' TTL (for a reader held back by a
// waiting writer, that writer's deadline) runs out. A write unlock wakes
// every waiter, so that all blocked readers enter at once. A read unlock
// that frees the lock wakes one waiter per client: a waiting writer, if the
// client has one, before any reader that the writer would hold back. A
// waiting writer attempts again at least every third of its deadline, to
// renew it.
//
// The API has one shape per need, not two complete ones. RWMutex has
// sync.RWMutex's methods (RLock, RUnlock, Lock, Unlock, their Try forms,
// RLocker and Locker), so that it replaces a shared sync.RWMutex where Go
// code expects one. What concerns one side's hold (LockContext, Done, Err,
// HoldCount, IsLocked of that side) lives on that side alone: ReadLock and
// WriteLock return the two sides as locks of their own (Redisson's
// readLock and writeLock), which also serve code that takes any lock, such
// as a multilock.
//
// Redis keys of a lock named N: Redisson's, and three of latchkey's:
//
//	N                                    hash: mode = read|write,
//	                                     <uuid>:<n> = read holds,
//	                                     <uuid>:<n>:write = write holds;
//	                                     TTL = the longest lease of any hold
//	{N}:<uuid>:<n>:rwlock_timeout:<i>    one per read hold i, TTL = its lease
//	redisson_rwlock:{N}                  channel: "0" after a read unlock
//	                                     frees the lock, "1" (wake all)
//	                                     after a write unlock
//	latchkey_rwlock_writers:{N}          latchkey's: sorted set of waiting
//	                                     writers, each scored with its
//	                                     deadline; Redisson ignores it
//	latchkey_rwlock_epoch:{N}            latchkey's: how many write unlocks
//	                                     came while readers were held back;
//	                                     kept while readers are held back
//	latchkey_rwlock_token:{N}            latchkey's: the write holds'
//	                                     fencing counter, the latest token
//	                                     drawn; TTL = a day from its start
//	                                     and from every 256th token
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
// Any string is a name; those that a Redis Cluster cannot serve, and the
// error their calls return there, are in the package latchkey doc on names.
//
// Values of type RWMutex must not be copied after first use.
package rwlock
