package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// ErrClosed is returned by a closed Hub. It matches latchkey.ErrClosed.
var ErrClosed = lockerr.ErrClosed

// A Hub multiplexes the channel subscriptions of many waiters over one
// subscriber connection (one per cluster master in sharded mode). A Hub is
// safe for concurrent use. Its connection is opened on first use and closed
// after it has had no channels for the idle timeout.
type Hub struct {
	client redis.UniversalClient
	cfg    config
	done   chan struct{}
	id     string

	modeMu  sync.Mutex
	modeSet bool
	sharded bool
	probe   *probe // the look at the cluster under way, if any

	mu     sync.Mutex
	closed bool
	conns  map[string]*conn
	chans  map[string]*channel
}

type channel struct {
	name     string
	conn     *conn
	policy   WakePolicy
	counting bool // its waiters count messages (see SubscribeCounter)
	subs     []*Subscription
	taps     []*Subscription // see Tap
	pending  bool            // a SUBSCRIBE awaits the server's reply
	sendFail bool            // no SUBSCRIBE of it was written yet, or the last failed
	sending  *send           // the SUBSCRIBE queued or being written, if any
	ready    chan struct{}
	linger   *time.Timer // set while it has no waiters but stays subscribed
}

// New returns a Hub that subscribes through client. It does no I/O.
func New(client redis.UniversalClient, opts ...Option) *Hub {
	if client == nil {
		panic("pubsub: New: nil client")
	}
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	return &Hub{
		client: client,
		cfg:    cfg,
		done:   make(chan struct{}),
		id:     uuid.NewString(),
		conns:  make(map[string]*conn),
		chans:  make(map[string]*channel),
	}
}

// Subscribe registers a waiter on channel and returns once the server has
// confirmed the subscription, or when ctx is done, or on a Redis error. The
// policy decides how many waiters a message wakes; every caller must pass
// the same policy for a given channel. The caller must Close the returned
// Subscription.
func (h *Hub) Subscribe(ctx context.Context, name string, policy WakePolicy) (*Subscription, error) {
	return h.SubscribeNeed(ctx, name, policy, 1)
}

// SubscribeNeed is Subscribe for a waiter that needs need units of a
// message's count to succeed, such as a semaphore waiter for need permits.
// A message whose policy returns a count k wakes the waiters with no
// wake-up pending, oldest first, each taking the units it needs, and skips
// those that need more than is left: a release of k permits wakes the
// waiters that k permits may satisfy. When k > 0 fits no waiter, the
// oldest is woken anyway (a count is a hint, not a promise). A need below
// 1 counts as 1, which is what Subscribe gives every waiter.
func (h *Hub) SubscribeNeed(ctx context.Context, name string, policy WakePolicy, need int) (*Subscription, error) {
	return h.subscribe(ctx, name, policy, sub{need: need})
}

// SubscribeKey is Subscribe for a waiter that also takes letters: a
// message "@key body" on the channel is for the waiter subscribed with key
// alone, which reads body with Letter. It wakes no other waiter. A letter
// for a key nobody waits with (its waiter left) goes, with an empty body,
// to one other waiter of the channel that takes letters, if there is one:
// the letter may have asked something of the waiter that left which
// another can do. A release that grants a lock to one waiter of a client
// writes it a letter.
func (h *Hub) SubscribeKey(ctx context.Context, name string, policy WakePolicy, key string) (*Subscription, error) {
	return h.subscribe(ctx, name, policy, sub{key: key})
}

// SubscribeCounter registers a waiter that counts the messages on channel
// rather than waking on each: it is woken once as many have arrived, since
// it last read the count (Count), as it expects (Expect, 1 at first). Every
// waiter of the channel must be a counter. A queued mutex waiter counts
// releases this way, and wakes only when its turn may have come.
func (h *Hub) SubscribeCounter(ctx context.Context, name string) (*Subscription, error) {
	return h.subscribe(ctx, name, WakeAll, sub{counter: true})
}

// SubscribeCounterNeed is SubscribeCounter for a waiter that counts only
// the messages that policy counts as All or as at least need (see
// WakePolicy): a semaphore waiter for need permits counts only the
// releases that leave that many available. Every waiter of the channel
// must be a counter and pass the same policy; SubscribeCounter's policy
// counts every message.
func (h *Hub) SubscribeCounterNeed(ctx context.Context, name string, policy WakePolicy, need int) (*Subscription, error) {
	return h.subscribe(ctx, name, policy, sub{counter: true, need: need})
}

// Tap registers a listener on channel that hears every message without
// taking part in waking its waiters: each message signals it, and it reads
// them with Heard, which also says when messages may have been missed (a
// reconnect). Like Subscribe, it returns once the server confirmed the
// subscription. A lock's holder
// taps its lock's channel to hear that someone else ended its hold.
func (h *Hub) Tap(ctx context.Context, name string) (*Subscription, error) {
	return h.subscribe(ctx, name, nil, sub{tap: true})
}

// sub is what a waiter asks of a subscription besides its channel.
type sub struct {
	need    int    // see SubscribeNeed
	key     string // see SubscribeKey
	counter bool   // see SubscribeCounter
	tap     bool   // see Tap
}

func (h *Hub) subscribe(ctx context.Context, name string, policy WakePolicy, o sub) (*Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sharded, err := h.isSharded(ctx)
	if err != nil {
		return nil, err
	}
	addr := ""
	if sharded {
		if addr, err = h.nodeFor(ctx, name); err != nil {
			return nil, err
		}
	}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	ch := h.chans[name]
	if ch != nil && ch.linger != nil {
		ch.linger.Stop()
		ch.linger = nil
	}
	if ch == nil {
		ch = &channel{name: name, policy: policy, counting: o.counter, conn: h.connLocked(addr, sharded), ready: make(chan struct{})}
		ch.conn.channels++
		h.chans[name] = ch
		ch.pending, ch.sendFail = true, true
	}
	sub := &Subscription{hub: h, ch: ch, need: max(o.need, 1), key: o.key, expect: 1, tap: o.tap, c: make(chan struct{}, 1)}
	switch {
	case o.tap:
		ch.taps = append(ch.taps, sub)
	case len(ch.subs) == 0:
		// The first waiter sets how messages wake (a tap may have made
		// the channel); the others pass the same.
		ch.policy, ch.counting = policy, o.counter
		fallthrough
	default:
		ch.subs = append(ch.subs, sub)
	}
	if ch.sendFail && ch.sending == nil {
		ch.sending = &send{failed: make(chan struct{})}
		if len(ch.subs) == 0 {
			ch.conn.queueTapLocked(op{ch: ch})
		} else {
			ch.conn.queueLocked(op{ch: ch})
		}
	}
	var failed <-chan struct{} // nil, never ready, once written
	sending := ch.sending
	if sending != nil {
		failed = sending.failed
	}
	ready := ch.ready
	h.mu.Unlock()

	select {
	case <-ready:
		return sub, nil
	case <-failed:
		sub.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pubsub: subscribe %s: %w", name, sending.err)
	case <-h.done:
		sub.Close()
		return nil, ErrClosed
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
}

// Close closes every subscriber connection and wakes every waiter; their
// Subscriptions report Done. Later calls to Subscribe return ErrClosed, and
// so does a second Close.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	h.closed = true
	close(h.done)
	conns := h.conns
	h.conns, h.chans = map[string]*conn{}, map[string]*channel{}
	h.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// ID returns a random id unique to this Hub. A primitive that wants one
// waiter of this Hub, rather than every Hub, woken names a channel after it.
func (h *Hub) ID() string { return h.id }

// Done returns a channel closed when h is closed.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Linger returns how long h stays subscribed to a channel after its last
// waiter left (see WithLinger).
func (h *Hub) Linger() time.Duration { return max(h.cfg.linger, 0) }

// Client returns the client whose servers h listens to.
func (h *Hub) Client() redis.UniversalClient { return h.client }

// PublishCommand returns the command the scripts publish with: SPUBLISH when
// this Hub uses sharded pub/sub, PUBLISH otherwise.
func (h *Hub) PublishCommand(ctx context.Context) (string, error) {
	sharded, err := h.isSharded(ctx)
	if err != nil {
		return "", err
	}
	if sharded {
		return "SPUBLISH", nil
	}
	return "PUBLISH", nil
}

// Subscribed reports whether the Hub listens on channel name, confirmed by
// the server, so that a Subscribe to it returns without any I/O.
func (h *Hub) Subscribed(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.chans[name]
	return ch != nil && !ch.pending && !ch.sendFail
}

// Stats describes a Hub's current load.
type Stats struct {
	Connections int // open subscriber connections
	Channels    int // channels subscribed or being subscribed, lingering ones included
	Waiters     int // open Subscriptions
}

// Stats returns the Hub's current load.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{Connections: len(h.conns), Channels: len(h.chans)}
	for _, ch := range h.chans {
		s.Waiters += len(ch.subs) + len(ch.taps)
	}
	return s
}

// Unwrap returns the Hub behind a *pubsub.Hub, or nil for a nil one. Package
// pubsub, the public facade, sets it.
var Unwrap func(public any) *Hub
