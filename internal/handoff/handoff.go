// Package handoff is the one home of the grant on release: a release that
// frees a lock or permits hands them, in the same script, to the waiter at
// the head of latchkey's queue beside Redisson's keys, and tells that
// waiter with a letter on its Hub's channel, so that it need not make
// another round trip to learn it was served.
//
// The formats, which the scripts write and this package reads:
//
//   - A queue entry is "<hub id>/<letter key>" (a semaphore's also carries
//     the permits it waits for: "<hub id>/<n>/<letter key>"). The letter
//     key names one call: the owner id, with "/<call id>" for an owner that
//     may re-enter, or a fresh id per call (a permit semaphore's: its
//     first permit's id).
//   - A letter is published on "<prefix>:<hub id>" as "@<letter key>
//     <body>". A grant's body is "<what> <server clock in µs>" (a lock's
//     what is its fencing token); "next" tells the waiter that the one
//     ahead of it was granted and it now heads the queue; "turn" tells the
//     head of a queue that the lock or the permits are free, and its own
//     once Redisson's waiters had a moment to take them (Yield); an empty body,
//     which only the Hub makes, says a letter to a call of this client that
//     left went astray.
//
// The timing: a grant lasts Grace until its waiter takes it; a lock's
// waiter takes it TakeAfter after the letter, off Lock's path; a queue
// entry lives scripts.QueueLife unless its waiter attempts again.
package handoff

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// Grace is the lease of a hold that a release grants to the waiter at the
// head of the queue, until the waiter takes it: long enough for a live
// waiter to read its letter and extend the lease even when its process is
// starved of CPU or throttled (a loaded machine, a container over its CPU
// quota: at 100ms, about one hand-over in a thousand was lost so under two
// busy loops on 2 cores), short enough that a waiter that died or missed
// the letter holds up the lock only briefly. A waiter whose client is gone
// costs nothing: where the server counts a letter's receivers, a release
// skips it at once.
const Grace = time.Second

// TakeAfter is how long after its letter a granted hold is extended to the
// lock's own lease (a renewal, off Lock's path): a hold released sooner,
// as most contended holds are, never needs it. It leaves the renewal four
// fifths of the grace to arrive.
const TakeAfter = Grace / 5

// LetterWait is how long a waiter whose turn came, as Redisson's channel
// told it, waits for its letter before it attempts: the letter is on its
// way right behind the release's message, unless no latchkey release
// granted the lock.
const LetterWait = 5 * time.Millisecond

// Yield is how long the head of a mutex's or a semaphore's queue, told
// "turn", leaves a free lock or free permits to Redisson's waiters that
// the release woke: a Redisson waiter's attempt follows the release's
// message by about a round trip.
const Yield = 10 * time.Millisecond

// Ear is how long after a permit waiter left its Hub may still listen on
// Redisson's channel (see scripts/fragment/yield.lua): the Hub's linger,
// after a grace for the waiter's last steps on a slow machine.
func Ear(linger time.Duration) time.Duration { return linger + Grace }

// AfterGrace is how soon a waiter told "next", or told of a lost letter,
// attempts: once the grant ahead of it may have run out untaken.
func AfterGrace(at time.Time) time.Duration { return time.Until(at.Add(Grace + 10*time.Millisecond)) }

// After is how soon a waiter attempts after a letter that grants nothing,
// read at: "turn", once the yield is over; "next", or the Hub's empty
// word, after the grace (see AfterGrace).
func After(body string, at time.Time) time.Duration {
	if body == "turn" {
		return time.Until(at.Add(Yield))
	}
	return AfterGrace(at)
}

// TakeLetter reads a letter to a waiter whose attempt takes what a
// release granted it (a semaphore's Acquire, a RedLock's Lock): it returns
// how soon to attempt again, and whether the waiter now heads the queue. A
// grant asks for an attempt at once: the attempt takes the grant, and only
// its answer, that the grant was still there, ends the wait (the server
// takes a grant back after Grace, and hands it on). "next" says that the
// waiter ahead was granted: this one heads the queue, and tries once the
// grace is over, should that waiter never take it; so does an empty
// letter.
func TakeLetter(body string, at time.Time) (within time.Duration, head bool) {
	if !IsGrant(body) {
		return After(body, at), body == "next" || body == "turn"
	}
	return 0, false
}

// IsGrant reports whether a letter's body is a grant's, rather than "next",
// "turn" or the Hub's empty word (see TakeLetter). A waiter must tell them apart by
// the body, not by how soon TakeLetter asks it to attempt: a "next" read
// more than the grace after it arrived, as on a starved machine, also asks
// for an attempt at once, and grants nothing.
func IsGrant(body string) bool { return body != "next" && body != "turn" && body != "" }

// Counted is the flag that tells a script whether pub, the publish command
// of client, counts every receiver of a channel: on a single server, and
// with sharded pub/sub, it does; a cluster's PUBLISH counts only the
// subscribers of the node it ran on, and a Ring's servers are independent.
// A release drops a queued waiter whose letter nobody received only when
// the count can be trusted.
func Counted(client redis.UniversalClient, pub string) string {
	if _, ok := client.(*redis.Client); ok || pub == "SPUBLISH" {
		return "1"
	}
	return "0"
}
