package latchkey

import "github.com/latchkey/latchkey/internal/lockerr"

// The sentinel errors of latchkey. Every package returns them (wrapped), so
// errors.Is(err, latchkey.ErrNotHeld) holds for an error from any primitive.
var (
	// ErrNotHeld is returned by an unlock, a release or an extension from
	// an owner that does not hold the lock or permit: it never acquired it,
	// already released it, or lost it (its lease expired, it was force
	// unlocked). It is Redisson's IllegalMonitorStateException.
	ErrNotHeld = lockerr.ErrNotHeld

	// ErrLost is the reason a hold ended without an unlock: it expired,
	// was deleted or was taken over. A primitive's Err method reports it
	// after its Done channel closes.
	ErrLost = lockerr.ErrLost

	// ErrClosed is returned by a closed pub/sub Hub and by the waiters
	// blocked on it, and by holds whose watchdog was closed.
	ErrClosed = lockerr.ErrClosed

	// ErrWouldDeadlock is returned by a request that can never be granted
	// to its owner, such as a write lock asked for while holding only a
	// read lock.
	ErrWouldDeadlock = lockerr.ErrWouldDeadlock

	// ErrNotReplicated is returned when a write reached the master but no
	// replica acknowledged it within the replica-sync timeout (see the
	// WithReplicaSync option of each primitive). A failover could then lose
	// the write. An acquisition that gets it has been undone; a release or
	// count-down that gets it has been applied on the master all the same.
	ErrNotReplicated = lockerr.ErrNotReplicated

	// ErrInvalidPermits is returned by a semaphore method given a permit
	// count it cannot take: zero or less to acquire or release, less than
	// zero to set, beyond MaxPermits either way, or one that would take
	// the count beyond MaxPermits; or, from a permit semaphore, more
	// permits than it has in all. Such a call changes nothing.
	ErrInvalidPermits = lockerr.ErrInvalidPermits

	// ErrInvalidCount is returned by a latch's TrySetCount given a count of
	// zero or less. Such a call does no I/O and changes nothing.
	ErrInvalidCount = lockerr.ErrInvalidCount

	// ErrCrossSlot is returned by every call of a primitive on a Redis
	// Cluster whose name cannot keep all its keys and channels in one hash
	// slot: an empty name, or one whose braces do not make a non-empty hash
	// tag (such as "a}b", "{}x" or "x{"). Such a call does no I/O. The
	// same names work on a single server, where keys are derived from them
	// exactly as Redisson derives them. To use them on a cluster, give the
	// name a non-empty hash tag, such as {id} in "order:{id}". A server
	// that answers a script with CROSSSLOT (a cluster reached through a
	// client that is not a *redis.ClusterClient) is reported with it too.
	ErrCrossSlot = lockerr.ErrCrossSlot

	// ErrInvalidLease is returned by a call given a permit lease that is
	// negative, or positive but below MinLease (see package
	// permitsemaphore), and by a lock's Extend, an Expire or a
	// TrySetPermitsTTL given a lease or TTL below MinLease; and by every
	// one of them given a lease or TTL above MaxLease. Such a call does
	// no I/O and changes nothing.
	ErrInvalidLease = lockerr.ErrInvalidLease

	// ErrHeld is returned by a lock's Delete when someone holds the lock,
	// which it then leaves as it is: ForceUnlock releases a hold first.
	ErrHeld = lockerr.ErrHeld

	// ErrDeleted is returned by an Acquire that was waiting in a
	// semaphore's queue when Delete deleted the semaphore (packages
	// semaphore and permitsemaphore), rather than wait for permits that
	// may never come; a permit kept alive through the handle that deleted
	// it is lost with it (its Err matches both ErrLost and ErrDeleted).
	ErrDeleted = lockerr.ErrDeleted
)
