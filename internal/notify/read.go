package notify

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Read reads ps, a subscriber connection of client, and hands each
// subscription reply and message to on, until ps is closed. It reads the
// connection itself, rather than through go-redis's Channel, whose extra
// goroutine would stand between every message and its reader. As that
// Channel does, it sends a PING when the connection has been quiet for
// health, so that a broken connection fails a write and go-redis redials
// it (and subscribes again: on then gets a second confirmation of a
// channel, and whatever was published meanwhile is lost). A command the
// server refused, the connection staying up (a SUBSCRIBE, a resubscription
// after a reconnect among them), is handed to on as its error.
func Read(ps *redis.PubSub, client redis.UniversalClient, health time.Duration, on func(any)) {
	ctx := context.Background()
	errs := 0
	for {
		m, err := ps.ReceiveTimeout(ctx, health)
		var ne net.Error
		switch {
		case errors.Is(err, redis.ErrClosed):
			return
		case errors.As(err, &ne) && ne.Timeout():
			pctx, cancel := context.WithTimeout(ctx, health)
			_ = ps.Ping(pctx)
			cancel()
			continue
		case isRefusal(err):
			on(err)
			continue
		case err != nil:
			// go-redis redials on the next read, to the master of the
			// first channel's slot as the client last mapped the cluster.
			// After a failover nothing else may remap it while every
			// waiter sleeps (go-redis reloads the map on a failed command,
			// or once a minute), so the connection would keep dialling the
			// dead master: reload it here (go-redis spaces reloads out).
			if cc, ok := client.(*redis.ClusterClient); ok {
				cc.ReloadState(ctx)
			}
			// A server that is down is not dialled in a busy loop.
			if errs++; errs > 1 {
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		errs = 0
		on(m)
	}
}

// isRefusal reports whether err is the server's answer to a command, not
// a failure of the connection.
func isRefusal(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}
