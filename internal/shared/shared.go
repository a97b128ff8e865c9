// Package shared keeps what latchkey holds for each go-redis client in this
// process: the Hub its waiters share and the watchdog that renews its
// holds, both made on first use, and what the script runner caches about
// its servers. Close releases all of it.
package shared

import (
	"context"
	"sync"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Client is latchkey's state for one go-redis client.
type Client struct {
	client redis.UniversalClient

	mu       sync.Mutex
	hub      *notify.Hub
	watchdog *lease.Scheduler
}

var registry struct {
	sync.Mutex
	m map[redis.UniversalClient]*Client
}

// For returns the state of c, creating it on first use. It does no I/O.
func For(c redis.UniversalClient) *Client {
	registry.Lock()
	defer registry.Unlock()
	if s := registry.m[c]; s != nil {
		return s
	}
	if registry.m == nil {
		registry.m = make(map[redis.UniversalClient]*Client)
	}
	s := &Client{client: c}
	registry.m[c] = s
	return s
}

// Hub returns the Hub shared by every primitive of this process that uses
// the client and was given no Hub of its own; its connection closes when
// idle.
func (s *Client) Hub() *notify.Hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hub == nil {
		s.hub = notify.New(s.client)
	}
	return s.hub
}

// Watchdog returns the scheduler that renews the client's holds.
func (s *Client) Watchdog() *lease.Scheduler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchdog == nil {
		s.watchdog = lease.New(s.client)
	}
	return s.watchdog
}

// Publish returns the command the scripts publish with, PUBLISH or
// SPUBLISH: that of h, the Hub a primitive waits through, or of the shared
// Hub when h is nil, so that publishers and waiters agree.
func Publish(ctx context.Context, c redis.UniversalClient, h *notify.Hub) (string, error) {
	if h == nil {
		h = For(c).Hub()
	}
	return h.PublishCommand(ctx)
}

// Close releases the state of c: waiters on the shared Hub return an error
// matching ErrClosed, and the holds the watchdog renewed are declared lost
// (they expire with their lease, as when a Redisson client shuts down). A
// later For starts afresh.
func Close(c redis.UniversalClient) error {
	registry.Lock()
	s := registry.m[c]
	delete(registry.m, c)
	registry.Unlock()
	scripts.Forget(c)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	hub, watchdog := s.hub, s.watchdog
	s.mu.Unlock()
	if watchdog != nil {
		watchdog.Close()
	}
	if hub != nil {
		return hub.Close()
	}
	return nil
}
