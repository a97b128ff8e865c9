// Package multilock takes several locks as one, all or nothing, like
// Redisson's RedissonMultiLock.
//
// A MultiLock is built from any values with the small ctx-aware method set
// of [Member]: *mutex.Mutex, *fairlock.Mutex, the read and write handles of
// an rwlock, a *redlock.Mutex, even another *MultiLock. The members may live
// on different Redis servers; the MultiLock itself keeps nothing in Redis.
//
// Acquiring never waits while holding a member. An attempt takes the
// members in order with single, non-waiting tries. When one is busy, every
// member already taken is released, and the MultiLock waits for the busy
// member alone, through that member's own wait (so it wakes on the member's
// unlock message, not on a timer), then keeps it and tries the others
// again. Because nothing is held while waiting, two MultiLocks that take the
// same members in opposite orders cannot deadlock. Should they keep
// colliding, a short random pause that grows with every collision (capped
// at 100ms) separates them.
//
// A failed or abandoned acquisition leaves nothing held: the members taken
// are released, with a context that is not cancelled, before Lock or
// TryLock returns.
//
// A hold of a MultiLock ends with the first of its members' holds to end
// without the MultiLock's Unlock: its Done channel closes, and Err, as
// well as the cause of the context LockContext returned, is an error
// matching latchkey.ErrLost that names the member. A MultiLock learns this
// from the members that are LossReporters, as every latchkey lock and
// MultiLock is; the loss of another member goes unseen until Unlock. The
// other members stay held, as in Redisson: the work under the hold may
// still be winding down, and they keep guarding what it touched until the
// caller's Unlock, which releases them and returns an error matching
// latchkey.ErrNotHeld for the lost one. Only Unlock releases members.
//
// Ownership follows the members: with an owner in ctx (see
// latchkey.WithOwner) the members are taken by that owner, reentrantly if
// they support it; without one each member takes a plain hold, and Unlock
// releases the members' current plain holds. A member must not appear twice
// in one MultiLock unless ctx carries an owner and the member is reentrant.
package multilock
