package redistest

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlowDialClient returns a client of s with one connection ready for its
// commands, whose later dials each take d more: a Hub made on it confirms
// its first subscription late, while the client's commands run at once.
// The client is closed by t.Cleanup.
func (s *Server) SlowDialClient(t testing.TB, d time.Duration) *redis.Client {
	t.Helper()
	var ready atomic.Bool // set once the first connection is up
	c := s.Client(t, func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if ready.Load() {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			var nd net.Dialer
			return nd.DialContext(ctx, network, addr)
		}
	})
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	ready.Store(true)
	return c
}
