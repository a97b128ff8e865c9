package notify

import "strconv"

// A WakePolicy says how many local waiters a message on a channel wakes.
// It returns a count, or All to wake every waiter.
type WakePolicy func(payload string) int

// All, returned by a WakePolicy, wakes every waiter on the channel.
const All = -1

// WakeOne wakes one waiter per message, whatever the payload: a lock unlock.
func WakeOne(string) int { return 1 }

// WakeAll wakes every waiter: a latch reaching zero.
func WakeAll(string) int { return All }

// WakeCount reads the payload as a decimal count and wakes that many waiters
// (at least one): a semaphore release publishing the permits now available.
// A waiter subscribed with a need (Want.Need) counts as that many.
func WakeCount(payload string) int {
	n, err := strconv.Atoi(payload)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// WakeAllOn wakes every waiter when the payload equals msg, and one waiter
// otherwise: Redisson's read-write lock, whose write unlock publishes "1".
func WakeAllOn(msg string) WakePolicy {
	return func(payload string) int {
		if payload == msg {
			return All
		}
		return 1
	}
}
