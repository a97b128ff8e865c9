// Package settings keeps what users set per go-redis client that the call
// machinery below the runtime reads on every call: the outage ride-out
// (see latchkey.SetRideOut) and polling instead of pub/sub (see
// latchkey.SetPolling). It lives in the client's runtime
// (internal/perclient), and goes with it.
package settings

import (
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

// DefaultRideOut is how long a call rides out an outage unless its client
// says otherwise: long enough for a Redis Cluster failover with a 15s node
// timeout and an election, or a restart of a server with a small data set.
const DefaultRideOut = 30 * time.Second

// rideOut is a client's ride-out, 0 for the default.
var rideOut = perclient.Declare(func(redis.UniversalClient) *atomic.Int64 { return new(atomic.Int64) }, nil)

// SetRideOut makes d the ride-out of c's calls; d <= 0 restores the default.
func SetRideOut(c redis.UniversalClient, d time.Duration) {
	rideOut.Get(c).Store(int64(max(d, 0)))
}

// RideOut returns how long c's calls ride out an outage.
func RideOut(c redis.UniversalClient) time.Duration {
	if d, ok := rideOut.Peek(c); ok && d.Load() > 0 {
		return time.Duration(d.Load())
	}
	return DefaultRideOut
}
