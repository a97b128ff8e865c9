// Package lockerr defines the sentinel errors shared by every latchkey package.
// They are re-exported by the root package and by pubsub, so errors.Is matches
// an error from any primitive against any of those names.
package lockerr

import "errors"

var (
	// ErrNotHeld: an unlock, release or extension by someone who does not hold it.
	ErrNotHeld = errors.New("latchkey: not held by this owner")
	// ErrLost: a hold ended without an unlock (expired, deleted or taken over).
	ErrLost = errors.New("latchkey: hold lost")
	// ErrClosed: use of a closed Hub or a closed client registry.
	ErrClosed = errors.New("latchkey: closed")
	// ErrWouldDeadlock: a request that can never be granted to this owner.
	ErrWouldDeadlock = errors.New("latchkey: would deadlock")
	// ErrNotReplicated: a write that no replica of its master acknowledged in time.
	ErrNotReplicated = errors.New("latchkey: not replicated")
	// ErrInvalidPermits: a permit count a semaphore cannot take.
	ErrInvalidPermits = errors.New("latchkey: invalid permit count")
	// ErrInvalidCount: a latch count that cannot be set.
	ErrInvalidCount = errors.New("latchkey: invalid count")
	// ErrCrossSlot: a name whose keys would not share one cluster hash slot.
	ErrCrossSlot = errors.New("latchkey: keys in different cluster hash slots")
	// ErrInvalidLease: a lease that is negative or too short to outlive a round trip.
	ErrInvalidLease = errors.New("latchkey: invalid lease")
	// ErrHeld: a deletion of a lock that someone holds.
	ErrHeld = errors.New("latchkey: held")
	// ErrDeleted: a wait for something that was deleted meanwhile.
	ErrDeleted = errors.New("latchkey: deleted")
)
