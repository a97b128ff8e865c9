package main

import (
	"context"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
)

func init() {
	register(&Impl{
		Name:  "latchkey",
		Color: "#1f77b4",
		Kind:  KindMutex,
		Rank:  0,
		About: "latchkey mutex with its defaults: watchdog lease 30s, waiters sleep on the " +
			"client's shared pub/sub Hub until an unlock message or the holder's TTL.",
		New:   func(c *Conn, name string) any { return latchkeyMutex{mutex.New(c.Client, name)} },
		Close: closeLatchkey,
	})
	register(&Impl{
		Name:  "latchkey-lease",
		Color: "#6baed6",
		Kind:  KindMutex,
		Rank:  1,
		About: "latchkey mutex with WithLease(8s): a fixed TTL like the peers' 8s, so no watchdog; " +
			"otherwise as latchkey.",
		New: func(c *Conn, name string) any {
			return latchkeyMutex{mutex.New(c.Client, name, mutex.WithLease(8*time.Second))}
		},
		Close: closeLatchkey,
	})
}

type latchkeyMutex struct{ m *mutex.Mutex }

func (l latchkeyMutex) Lock(ctx context.Context) error   { return l.m.Lock(ctx) }
func (l latchkeyMutex) Unlock(ctx context.Context) error { return l.m.Unlock(ctx) }

// closeLatchkey releases the Hub and watchdog latchkey keeps for each client.
func closeLatchkey(c *Conn) {
	_ = latchkey.Close(c.Client)
	for _, n := range c.Nodes {
		_ = latchkey.Close(n)
	}
}
