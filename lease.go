package latchkey

import "github.com/latchkey/latchkey/internal/lockopt"

// MinLease is the shortest lease latchkey accepts: for a lock's lease,
// fixed (each lock package's WithLease) or kept by the watchdog
// (WithWatchdogTimeout), whose New panics below it; and for a permit's
// lease (package permitsemaphore), whose calls return an error matching
// ErrInvalidLease below it. Redis keeps TTLs in whole milliseconds, and a
// hold is good only for its lease less the time its request took and a
// clock drift allowance of at least 2ms: with a shorter lease a lock would
// expire before its holder learned that it had it.
const MinLease = lockopt.MinLease

// MaxLease is the longest lease or TTL latchkey accepts, about 292 years:
// the longest time.Duration in whole milliseconds, so that a TTL or lease
// read back (TTL, LeaseTime) is the Duration that was set. Every call or
// option that takes a lease or a TTL (WithLease, WithWatchdogTimeout,
// Extend, a permit's lease, Expire, TrySetPermitsTTL, an election's
// WithLeaseTimeout) refuses a longer one as it refuses one below MinLease.
const MaxLease = lockopt.MaxLease
