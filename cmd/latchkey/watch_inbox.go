package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// A message is one pub/sub message that watch received.
type message struct {
	at               time.Time
	channel, payload string
}

// maxPending bounds the messages an inbox keeps between two looks; those
// beyond it are counted, not kept.
const maxPending = 10000

// An inbox follows channels with subscriptions of its own, not through the
// library's Hub: a Hub hands its waiters coalesced wake-ups, and watch
// must see every message and its payload. It subscribes as the scripts
// publish: with SSUBSCRIBE, one connection per hash slot followed, when
// the deployment uses sharded pub/sub, else on one connection with
// PSUBSCRIBE, to a pattern that matches one channel alone or every channel
// under a prefix (a fair lock's waiters' own channels), which PUBSUB
// NUMSUB does not count: inspect, elsewhere, does not take a watch for a
// waiter, and neither does a release deciding whether Redisson's waiters
// listen (scripts/fragment/subscribers.lua), though PUBLISH counts it.
// With sharded pub/sub, which has no patterns, a watch counts as a
// listener: there, a release heard by a watch while latchkey waiters
// queue gives Redisson's waiters a turn they do not take
// (handoff.Yield, 10ms).
//
// The inbox deals in subscriptions, made by exact and prefix: a channel
// with SSUBSCRIBE, a pattern with PSUBSCRIBE.
type inbox struct {
	client  redis.UniversalClient
	sharded bool
	wake    chan struct{} // a message arrived, or a connection came back

	mu        sync.Mutex
	conns     map[int]*redis.PubSub    // by hash slot when sharded, else at -1
	subs      map[string]bool          // the subscriptions made
	confirmed map[string]chan struct{} // by subscription
	pending   []message
	dropped   int // messages not kept since the last take (maxPending)
	wg        sync.WaitGroup
}

func newInbox(client redis.UniversalClient, sharded bool) *inbox {
	return &inbox{
		client: client, sharded: sharded, wake: make(chan struct{}, 1),
		conns: map[int]*redis.PubSub{}, subs: map[string]bool{}, confirmed: map[string]chan struct{}{},
	}
}

// follow makes the subscriptions of want not made yet, waits until the
// server has confirmed them (or ctx ends), and ends those no longer
// wanted.
func (in *inbox) follow(ctx context.Context, want []string) error {
	keep := map[string]bool{}
	var waits []chan struct{}
	in.mu.Lock()
	for _, sub := range want {
		keep[sub] = true
		if in.subs[sub] {
			continue
		}
		done := make(chan struct{})
		in.confirmed[sub] = done
		if err := in.subscribeLocked(ctx, sub); err != nil {
			delete(in.confirmed, sub)
			in.mu.Unlock()
			return fmt.Errorf("subscribe %s: %w", sub, err)
		}
		in.subs[sub] = true
		waits = append(waits, done)
	}
	for sub := range in.subs {
		if !keep[sub] {
			delete(in.subs, sub)
			delete(in.confirmed, sub)
			ps := in.conns[in.slot(sub)]
			if in.sharded {
				_ = ps.SUnsubscribe(ctx, sub) // a lost one only costs stray messages
			} else {
				_ = ps.PUnsubscribe(ctx, sub)
			}
		}
	}
	in.mu.Unlock()
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("subscribe: %w", ctx.Err())
		}
	}
	return nil
}

// counted returns the channels followed that PUBSUB counts watch's
// subscription to, which its reads must not count among the listeners:
// every one with SSUBSCRIBE, none with PSUBSCRIBE.
func (in *inbox) counted() selfListens {
	if !in.sharded {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	self := make(selfListens, len(in.subs))
	for ch := range in.subs {
		self[ch] = true
	}
	return self
}

// exact is the subscription to channel ch alone: ch itself with
// SSUBSCRIBE, else a pattern that matches ch alone.
func (in *inbox) exact(ch string) string {
	if in.sharded {
		return ch
	}
	return globEscape.Replace(ch)
}

// prefix is the subscription to every channel that starts with p, "" with
// sharded pub/sub, which has no patterns.
func (in *inbox) prefix(p string) string {
	if in.sharded {
		return ""
	}
	return globEscape.Replace(p) + "*"
}

// globEscape escapes the characters special in a PSUBSCRIBE pattern.
var globEscape = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)

// slot is the key of the connection that makes subscription sub.
func (in *inbox) slot(sub string) int {
	if in.sharded {
		return keys.Slot(sub)
	}
	return -1
}

// subscribeLocked makes subscription sub on its connection, opening it
// (and starting its reader) if it is the first of its slot.
func (in *inbox) subscribeLocked(ctx context.Context, sub string) error {
	slot := in.slot(sub)
	ps := in.conns[slot]
	if ps == nil {
		if in.sharded {
			ps = in.client.SSubscribe(ctx, sub)
		} else {
			ps = in.client.PSubscribe(ctx, sub)
		}
		in.conns[slot] = ps
		in.wg.Add(1)
		go in.read(ps)
		return nil
	}
	if in.sharded {
		return ps.SSubscribe(ctx, sub)
	}
	return ps.PSubscribe(ctx, sub)
}

// read receives what arrives on ps until ps is closed. A confirmation of a
// channel already confirmed means go-redis reconnected and subscribed
// again: what was published meanwhile is lost, so watch must look again.
func (in *inbox) read(ps *redis.PubSub) {
	defer in.wg.Done()
	notify.Read(ps, in.client, 30*time.Second, func(m any) {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "psubscribe" || m.Kind == "ssubscribe" {
				in.confirm(m.Channel)
			}
		case *redis.Message:
			in.add(cmp.Or(m.Pattern, m.Channel), message{at: time.Now(), channel: m.Channel, payload: m.Payload})
		}
	})
}

func (in *inbox) confirm(ch string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	done := in.confirmed[ch]
	if done == nil {
		return
	}
	select {
	case <-done:
		in.signal() // resubscribed after a reconnect
	default:
		close(done)
	}
}

// add keeps m, which came by subscription sub.
func (in *inbox) add(sub string, m message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.subs[sub] {
		return // unsubscribed from since
	}
	if len(in.pending) < maxPending {
		in.pending = append(in.pending, m)
	} else {
		in.dropped++
	}
	in.signal()
}

// signal wakes the watch to look again; wake-ups coalesce.
func (in *inbox) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take returns the messages received since the last take, oldest first,
// and how many were received beyond maxPending and not kept.
func (in *inbox) take() ([]message, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ms, dropped := in.pending, in.dropped
	in.pending, in.dropped = nil, 0
	return ms, dropped
}

// await waits up to d for a message, and returns those received since
// the last take, as take does.
func (in *inbox) await(ctx context.Context, d time.Duration) ([]message, int) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-in.wake:
	case <-t.C:
	case <-ctx.Done():
	}
	return in.take()
}

// unread puts ms, taken, back before the messages received since, for the
// next take.
func (in *inbox) unread(ms []message) {
	if len(ms) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.pending = append(slices.Clone(ms), in.pending...)
	in.signal()
}

// close closes every connection and waits for their readers to end.
func (in *inbox) close() {
	in.mu.Lock()
	conns := in.conns
	in.conns = map[int]*redis.PubSub{}
	in.mu.Unlock()
	for _, ps := range conns {
		_ = ps.Close()
	}
	in.wg.Wait()
}
