// Package redlock provides a distributed lock held on a majority of
// independent Redis masters: the Redlock algorithm, done as the Redis
// documentation describes it (Redisson's RedissonRedLock never computes a
// validity).
//
// A Mutex spans N clients, each talking to its own master (no replication
// between them); the quorum is N/2+1. An attempt asks every node at once,
// with the same fresh owner id, each node answering within the node
// timeout. It succeeds only if a quorum granted the lock and validity =
// lease - elapsed - drift is positive, where elapsed is how long the attempt
// took and drift = lease/100 + 2ms allows for the nodes' clocks. Otherwise
// the attempt is undone on every node that granted it or did not answer (a
// reply that arrives later is undone when it arrives), and retried after a
// random delay. So with 5 nodes the lock survives 2 nodes being down, and a
// third failure makes Lock return a *QuorumError that names each failed
// node.
//
// Without WithLease, a watchdog renews the hold on every node each third of
// the watchdog timeout; each renewal confirmed by a quorum extends the
// validity. When renewals find too few nodes still holding it, or the
// validity runs out without a quorum renewal, the hold is lost: Done
// closes, Err reports latchkey.ErrLost and Unlock returns
// latchkey.ErrNotHeld. With WithLease the hold ends when its validity runs
// out. Unlike package mutex, the lock has no fencing token: each node keeps
// its own counter, and no combination of them is guaranteed to increase.
//
// Ownership is as in package mutex: goroutines sharing a handle exclude
// each other, and an owner carried by ctx (latchkey.WithOwner) may re-enter
// a hold it took through the same handle; the re-entry is counted locally,
// each node keeps a count of 1. A hold lives in the handle that took it: an
// owner id handed to another process (latchkey.WithOwnerID) cannot unlock it
// there.
//
// # What a hold guarantees
//
// Redlock assumes bounded clock drift and bounded pauses: a holder that
// pauses past its validity (a GC, a stopped VM) may still act after
// another client took the lock, as with any lease. It also assumes that a
// node keeps the keys it acknowledged. A node restarted without
// persistence comes back empty, so the holds it was part of can be taken a
// second time: with 3 nodes and a hold on nodes 0 and 1, restarting node 1
// lets another client win nodes 1 and 2 while the first still believes it
// holds the lock, until its next renewal finds the quorum gone and closes
// its Done. Run the nodes with appendonly yes and appendfsync always, or
// keep a crashed node down for longer than the lease before it rejoins
// (the "delayed restart" of the Redlock description).
//
// Waiters retry after a random delay (WithRetryDelay); WithHub makes one
// node keep a queue of waiters, so that an unlock wakes the next waiter
// alone, at once.
//
// Redis keys on each node, as Redisson lays out an RLock named N:
//
//	N                            hash {<uuid>:<n>: 1}, TTL = lease
//	redisson_lock_token:{N}      counter incremented by every grant (unused),
//	                             TTL = a day from its start and every 256th
//	redisson_lock__channel:{N}   unlock channel, message "0"
//
// and on the queue node of a Mutex made WithHub, as a mutex keeps them:
//
//	latchkey_lock_queue:{N}      list of waiter entries, oldest first
//	latchkey_lock_timeout:{N}    zset: waiter entry -> deadline (ms)
//	latchkey_lock_grant:{N}      the entry a release granted the lock to
//	latchkey_lock__channel:{N}:<hub id>  each Hub's channel, for letters
package redlock
