// Package lockopt holds the settings every primitive shares: the Hub its
// waiters sleep on and how long its writes wait for replicas (Base), and,
// for the locks, a fixed lease or the watchdog's (Common). Each primitive
// embeds one in its config and exports its own With... options, documented
// for that primitive.
package lockopt

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// Base is the part of every primitive's config.
type Base struct {
	Hub  *notify.Hub // nil: the client's shared Hub
	Sync rt.Sync     // how long writes wait for replicas
}

// HubFor returns the Hub to wait through: the one set, else client's shared
// one, looked up at each call so that latchkey.Close takes effect.
func (b *Base) HubFor(client redis.UniversalClient) *notify.Hub {
	if b.Hub != nil {
		return b.Hub
	}
	return rt.Of(client).Hub()
}

// Sender returns the primitive's send path on client (see rt.Sender):
// through the Hub it waits through, waiting for replicas as set.
func (b *Base) Sender(client redis.UniversalClient) rt.Sender {
	return rt.Of(client).Sender(b.Hub, b.Sync.Timeout())
}

// Common is the shared part of a lock primitive's config.
type Common struct {
	Base
	Fixed    time.Duration // > 0: a fixed lease, and no watchdog
	Watchdog time.Duration // the lease the watchdog keeps, without Fixed
}

// MinLease is the shortest lease accepted, fixed (WithLease), kept by the
// watchdog (WithWatchdogTimeout) or per call (a permit's): Redis keeps
// TTLs in whole milliseconds, and a hold is only good for its lease less
// the time its request took and the drift allowance (lease.Drift: 2ms and
// more), so a shorter lease would expire before its holder learned it had
// it, and a Lock would retry until its ctx ended.
const MinLease = 10 * time.Millisecond

// MaxLease is the longest lease or TTL accepted, about 292 years: the
// longest time.Duration in whole milliseconds, which Redis keeps as TTLs,
// so that what a TTL or lease query reads back is a Duration again. Lua
// numbers (exact to 2^53 ms) and Redis (a TTL of up to 2^63 ms from now)
// hold more, and a permit's lease end stays below the score Redisson
// takes for a permanent permit (year 31197) for 28,000 years yet.
const MaxLease = math.MaxInt64 / time.Millisecond * time.Millisecond

// CheckLease returns nil if d is a lease a hold can have, or a TTL a key
// can be given, and otherwise an error matching lockerr.ErrInvalidLease
// that says why: d is negative, below MinLease or above MaxLease. Every
// lease and TTL a caller passes goes through it.
func CheckLease(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("%w: %v is negative", lockerr.ErrInvalidLease, d)
	case d < MinLease:
		return fmt.Errorf("%w: %v is below the minimum of %v, too short to outlive a round trip to Redis", lockerr.ErrInvalidLease, d, MinLease)
	case d > MaxLease:
		return fmt.Errorf("%w: %v is above the maximum of %v, the longest a TTL read back can report", lockerr.ErrInvalidLease, d, MaxLease)
	}
	return nil
}

// MaxPermits is the largest count of permits a semaphore takes, gives or
// keeps, either way: 2^53 - 1, the largest integer that a Lua number (a
// double) holds exactly. The scripts do their sums in Lua numbers, and a
// larger count would be stored rounded, or as "1.2e+18", which neither
// latchkey nor Redisson can read as a count.
const MaxPermits = 1<<53 - 1

// CheckPermits returns nil if n permits are at least least and at most
// MaxPermits, and otherwise an error matching lockerr.ErrInvalidPermits
// that says why. An n below -MaxPermits is refused whatever least is.
func CheckPermits(n, least int64) error {
	switch {
	case n < least:
		return fmt.Errorf("%w: %d is below %d", lockerr.ErrInvalidPermits, n, least)
	case n > MaxPermits || n < -MaxPermits:
		return fmt.Errorf("%w: %d is beyond ±%d, the counts a Lua number holds exactly", lockerr.ErrInvalidPermits, n, int64(MaxPermits))
	}
	return nil
}

// PermitsError returns err, or, if err is a semaphore script's refusal of
// a change that would take its count beyond MaxPermits (an error reply
// whose code is OVERFLOW, see scripts/fragment/exact.lua), an error
// matching lockerr.ErrInvalidPermits that says so.
func PermitsError(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		if msg, ok := strings.CutPrefix(re.Error(), "OVERFLOW "); ok {
			return fmt.Errorf("%w: %s", lockerr.ErrInvalidPermits, msg)
		}
	}
	return err
}

// SetLease sets a fixed lease; it panics, naming pkg, if CheckLease
// refuses d.
func (c *Common) SetLease(pkg string, d time.Duration) {
	if err := CheckLease(d); err != nil {
		panic(pkg + ": New: WithLease: " + err.Error())
	}
	c.Fixed = d
}

// SetWatchdog sets the watchdog's lease; it panics, naming pkg, if
// CheckLease refuses d: a hold it keeps must outlive its acquisition as a
// fixed lease must, and read back as one does.
func (c *Common) SetWatchdog(pkg string, d time.Duration) {
	if err := CheckLease(d); err != nil {
		panic(pkg + ": New: WithWatchdogTimeout: " + err.Error())
	}
	c.Watchdog = d
}

// TTL returns the TTL a hold's key gets: the fixed lease if any, else the
// watchdog's.
func (c *Common) TTL() time.Duration {
	if c.Fixed > 0 {
		return c.Fixed
	}
	return c.Watchdog
}
