package main

import (
	"context"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/latchkey/latchkey/mutex"
)

func init() {
	register(&Impl{
		Name:  "latchkey-watchdog",
		Color: "#0277bd",
		Kind:  KindWatchdog,
		Rank:  70,
		About: "latchkey mutex with WithWatchdogTimeout(1.5s): one renewal scheduler per client renews " +
			"every held lock each 500ms, in passes a tenth of the lease apart that batch up to 100 locks per script call.",
		New: func(c *Conn, name string) any {
			return keptMutex{latchkeyMutex{mutex.New(c.Client, name, mutex.WithWatchdogTimeout(watchdogLease))}}
		},
		Close: closeLatchkey,
	})
	register(&Impl{
		Name:  "redislock-refresh",
		Color: "#e377c2",
		Kind:  KindWatchdog,
		Rank:  71,
		About: "bsm/redislock with a 1.5s TTL and, per lock, the ticker its README recommends calling " +
			"Refresh every TTL/3 (500ms): what a user writes, since redislock has no watchdog.",
		New: func(c *Conn, name string) any { return &refreshed{c: redislock.New(c.Client), name: name} },
	})
}

type keptMutex struct{ latchkeyMutex }

func (k keptMutex) Lost() bool { return k.m.Err() != nil }

// refreshed is a redislock lock kept alive by its own ticker goroutine.
type refreshed struct {
	c    *redislock.Client
	name string

	mu   sync.Mutex
	l    *redislock.Lock
	stop chan struct{}
	done chan struct{}
	lost bool
}

func (r *refreshed) Lock(ctx context.Context) error {
	l, err := r.c.Obtain(ctx, r.name, watchdogLease, nil)
	if err != nil {
		return err
	}
	r.l, r.stop, r.done = l, make(chan struct{}), make(chan struct{})
	go r.refresh()
	return nil
}

func (r *refreshed) refresh() {
	defer close(r.done)
	t := time.NewTicker(watchdogLease / 3)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			if err := r.l.Refresh(context.Background(), watchdogLease, nil); err != nil {
				r.mu.Lock()
				r.lost = true
				r.mu.Unlock()
				return
			}
		}
	}
}

func (r *refreshed) Lost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

func (r *refreshed) Unlock(ctx context.Context) error {
	close(r.stop)
	<-r.done
	return r.l.Release(ctx)
}
