// Package settings keeps what users set per go-redis client that the call
// machinery below the runtime reads on every call: today the outage
// ride-out (see latchkey.SetRideOut). Reading a setting costs one atomic
// load while no client has one.
package settings

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRideOut is how long a call rides out an outage unless its client
// says otherwise: long enough for a Redis Cluster failover with a 15s node
// timeout and an election, or a restart of a server with a small data set.
const DefaultRideOut = 30 * time.Second

var (
	set      atomic.Int32 // clients with a ride-out of their own
	rideOuts sync.Map     // redis.UniversalClient -> time.Duration
)

// SetRideOut makes d the ride-out of c's calls; d <= 0 restores the default.
func SetRideOut(c redis.UniversalClient, d time.Duration) {
	if d <= 0 {
		if _, ok := rideOuts.LoadAndDelete(c); ok {
			set.Add(-1)
		}
		return
	}
	if _, loaded := rideOuts.Swap(c, d); !loaded {
		set.Add(1)
	}
}

// RideOut returns how long c's calls ride out an outage.
func RideOut(c redis.UniversalClient) time.Duration {
	if set.Load() == 0 || c == nil {
		return DefaultRideOut
	}
	if d, ok := rideOuts.Load(c); ok {
		return d.(time.Duration)
	}
	return DefaultRideOut
}
