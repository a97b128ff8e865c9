// Package pubsub configures the Hub that latchkey's waiters sleep on: one
// Redis subscriber connection per go-redis client (one per cluster master
// with sharded pub/sub) that every blocked Lock, Acquire and Wait of the
// client shares, woken by the unlock and release messages that Redisson
// and latchkey publish.
//
// Most programs never use this package: every primitive waits through the
// Hub shared by its client, made on first use and released by
// latchkey.Close. A program that wants its waiters on a connection of
// their own, or different settings, makes a Hub with New and passes it to
// the primitives' WithHub option.
package pubsub

import (
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// A Hub multiplexes the subscriptions of many waiters over one subscriber
// connection. It is safe for concurrent use. Its connection opens on first
// use and closes after it has had no channels for the idle timeout.
type Hub struct{ h *notify.Hub }

func init() {
	notify.Unwrap = func(h any) *notify.Hub {
		if h, ok := h.(*Hub); ok && h != nil {
			return h.h
		}
		return nil
	}
}

// New returns a Hub that subscribes through client. It does no I/O. It
// panics if client is nil.
func New(client redis.UniversalClient, opts ...Option) *Hub {
	keys.MustClient("pubsub", client)
	nopts := make([]notify.Option, len(opts))
	for i, o := range opts {
		nopts[i] = o.o
	}
	return &Hub{notify.New(client, nopts...)}
}

// Shared returns the Hub shared by the primitives that use client and were
// given no Hub of their own, as when one primitive should wake on another's
// connection (a RedLock waiting on one node's messages). latchkey.Close
// closes it.
func Shared(client redis.UniversalClient) *Hub {
	return &Hub{rt.Of(client).Hub()}
}

// Close closes the Hub's connections. Waiters blocked on it return an
// error matching latchkey.ErrClosed, and so do later waits through it and a
// second Close.
func (h *Hub) Close() error { return h.h.Close() }

// Stats describes a Hub's current load.
type Stats struct {
	Connections int // open subscriber connections
	Channels    int // channels subscribed or being subscribed, lingering ones included
	Waiters     int // waiters blocked on the Hub
}

// Stats returns the Hub's current load.
func (h *Hub) Stats() Stats {
	s := h.h.Stats()
	return Stats{Connections: s.Connections, Channels: s.Channels, Waiters: s.Waiters}
}
