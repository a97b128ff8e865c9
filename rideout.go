package latchkey

import (
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/redis/go-redis/v9"
)

// DefaultRideOut is the ride-out of a client that was given none: long
// enough for a Redis Cluster failover under the default 15s node timeout.
const DefaultRideOut = rt.DefaultRideOut

// SetRideOut sets how long the calls of every primitive of this process
// that uses client ride out an outage: errors that a retry may cure (a
// refused or reset connection, a timeout, a failover in progress) are
// retried, backing off up to a second, until the outage has lasted d; then
// the call returns the last error. It bounds a Lock or Acquire given
// context.Background() against a dead server, and the requests of the
// clean-up calls (Unlock, Release, CountDown and the like), which their
// ctx does not cut short. A call whose ctx ends first returns then. The
// setting is kept per client, like the hooks, until Close; d <= 0 restores
// DefaultRideOut (30s).
func SetRideOut(client redis.UniversalClient, d time.Duration) {
	rt.SetRideOut(client, d)
}
