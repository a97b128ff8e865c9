// Package permitsemaphore provides a counting semaphore backed by Redis
// whose permits have ids and leases, wire-compatible with Redisson's
// RPermitExpirableSemaphore.
//
// Acquire takes a permit and returns it as a *Permit with a random id; only
// that id releases it, from any goroutine or process (pass Permit.ID
// along). A permit acquired with a lease returns to the pool by itself when
// the lease ends, so the permits of a holder that crashes come back without
// anyone releasing them, which a plain semaphore (package semaphore) cannot
// do. A lease of zero or less makes a permanent permit, released only by
// its id. UpdateLeaseTime and Permit.Extend reset a permit's lease while it
// is held. Releasing or extending a permit whose lease ended, or one never
// acquired, fails with latchkey.ErrNotHeld.
//
// Leases end by the holders' wall clocks, as in Redisson: a permit's
// expiry is stored as a Unix time in milliseconds computed by the client
// that acquired it, so every client of a semaphore needs a synchronised
// clock. An expired permit is returned lazily, by the next operation of any
// client on the semaphore; a waiter blocked in Acquire sleeps at most until
// the earliest lease ends and then takes the permit, even if nothing is
// published.
//
// Waiters do not poll: releases and returned permits are published on the
// semaphore's channel, and the process's pub/sub Hub wakes the local
// waiters they may satisfy. A lost message costs a waiter a few seconds at
// most.
//
// The semaphore is not fair: a waiter for many permits can be overtaken by
// waiters for fewer.
//
// Redis keys, as Redisson lays them out for a semaphore named N:
//
//	N                  string, the number of available permits (may be negative)
//	{N}:timeout        zset, permit id (16 raw bytes) -> lease end in Unix ms,
//	                   or 922337203685477 for a permanent permit
//	redisson_sc:{N}    channel, message: a count of permits that came back
//
// A name that contains "{" is used as is, keeping the caller's hash tag.
package permitsemaphore
