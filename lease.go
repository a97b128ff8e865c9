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
