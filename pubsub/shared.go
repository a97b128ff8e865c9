package pubsub

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

var shared struct {
	sync.Mutex
	hubs map[redis.UniversalClient]*Hub
}

// Shared returns the Hub shared by every primitive of this process that uses
// client and was given no Hub of its own. It is created on first use; its
// connection closes when idle. CloseShared releases it.
func Shared(client redis.UniversalClient) *Hub {
	shared.Lock()
	defer shared.Unlock()
	if h := shared.hubs[client]; h != nil {
		return h
	}
	if shared.hubs == nil {
		shared.hubs = make(map[redis.UniversalClient]*Hub)
	}
	h := New(client)
	shared.hubs[client] = h
	return h
}

// CloseShared closes the shared Hub of client, if any; waiters blocked on it
// return ErrClosed. A later Shared call creates a new one.
func CloseShared(client redis.UniversalClient) error {
	shared.Lock()
	h := shared.hubs[client]
	delete(shared.hubs, client)
	shared.Unlock()
	if h == nil {
		return nil
	}
	return h.Close()
}
