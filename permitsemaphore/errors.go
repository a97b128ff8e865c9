package permitsemaphore

import "errors"

// ErrInvalidPermits is returned, wrapped, by a method given a permit count
// it cannot take: zero or less for AcquireN and TryAcquireN, less than zero
// for TrySetPermits and SetPermits. Such a call does no I/O and changes
// nothing.
var ErrInvalidPermits = errors.New("permitsemaphore: invalid permit count")
