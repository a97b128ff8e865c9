package semaphore

import "errors"

// ErrInvalidPermits is returned, wrapped, by a method given a permit count
// it cannot take: zero or less for Acquire, TryAcquire and Release, less
// than zero for TrySetPermits and SetPermits. Such a call does no I/O and
// changes nothing.
var ErrInvalidPermits = errors.New("semaphore: invalid permit count")
