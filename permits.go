package latchkey

import "github.com/latchkey/latchkey/internal/lockopt"

// MaxPermits is the largest count of permits that a semaphore (packages
// semaphore and permitsemaphore) takes, gives back or keeps, either way:
// 2^53 - 1, the largest integer that a Lua number holds exactly. The
// semaphores' scripts count in Lua numbers, and a larger count would be
// stored rounded, or in a form that neither latchkey nor Redisson reads
// as a count. A call given a larger count, or whose change would take the
// count beyond it, returns an error matching ErrInvalidPermits and changes
// nothing.
const MaxPermits = lockopt.MaxPermits
