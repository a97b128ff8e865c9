package countdownlatch

import "errors"

// ErrInvalidCount is returned, wrapped, by TrySetCount given a count of zero
// or less. Such a call does no I/O and changes nothing.
var ErrInvalidCount = errors.New("countdownlatch: invalid count")
