package notify

import (
	"context"
	"fmt"
)

// Subscribe registers a waiter on channel and returns once the server has
// confirmed the subscription, or when ctx is done, or on a Redis error. The
// policy decides how many waiters a message wakes; every caller must pass
// the same policy for a given channel. The caller must Close the returned
// Subscription.
func (h *Hub) Subscribe(ctx context.Context, name string, policy WakePolicy) (*Subscription, error) {
	return h.SubscribeWant(ctx, Want{Name: name, Policy: policy})
}

// Tap registers a listener on channel that hears every message without
// taking part in waking its waiters: each message signals it, and it reads
// them with Heard, which also says when messages may have been missed (a
// reconnect). Like Subscribe, it returns once the server confirmed the
// subscription. A lock's holder
// taps its lock's channel to hear that someone else ended its hold.
func (h *Hub) Tap(ctx context.Context, name string) (*Subscription, error) {
	return h.SubscribeWant(ctx, Want{Name: name, tap: true})
}

// A Want is a subscription that SubscribeWant or SubscribeAll makes: a
// waiter on channel Name whose messages wake as Policy says (see
// Subscribe), with what the waiter asks besides.
type Want struct {
	Name   string
	Policy WakePolicy
	// Need is the units of a message's count the waiter needs to succeed,
	// such as a semaphore waiter's permits. A message whose policy returns
	// a count k wakes the waiters with no wake-up pending, oldest first,
	// each taking the units it needs, and skips those that need more than
	// is left: a release of k permits wakes the waiters that k permits may
	// satisfy. When k > 0 fits no waiter, the oldest is woken anyway (a
	// count is a hint, not a promise). A need below 1 counts as 1.
	Need int
	// Key makes the waiter one that also takes letters: a message
	// "@key body" on the channel is for the waiter subscribed with Key
	// alone, which reads body with Letter. It wakes no other waiter. A
	// letter for a key nobody waits with (its waiter left) goes, with an
	// empty body, to one other waiter of the channel that takes letters,
	// if there is one: the letter may have asked something of the waiter
	// that left which another can do. A release that grants a lock to one
	// waiter of a client writes it a letter.
	Key string
	// Counter makes the waiter count the messages on the channel rather
	// than wake on each: it is woken once as many have arrived, since it
	// last read the count (Count), as it expects (Expect, 1 at first).
	// With a Need, it counts only the messages that Policy counts as All
	// or as at least Need (see WakePolicy): a semaphore waiter for n
	// permits counts only the releases that leave that many available.
	// Every waiter of the channel must be a counter, with the same Policy
	// (WakeAll counts every message). A queued mutex waiter counts
	// releases this way, and wakes only when its turn may have come.
	Counter bool
	tap     bool // see Tap
}

// SubscribeWant is Subscribe for the waiter w asks for.
func (h *Hub) SubscribeWant(ctx context.Context, w Want) (*Subscription, error) {
	var sub [1]*Subscription
	if err := h.SubscribeAll(ctx, []Want{w}, sub[:]); err != nil {
		return nil, err
	}
	return sub[0], nil
}

// SubscribeAll makes the subscriptions wants asks for, as the Subscribe
// functions make one each, into subs (as long as wants), once the server
// confirmed every one. The SUBSCRIBEs it needs share one command per
// connection (per hash slot in sharded mode): a waiter that needs two new
// channels pays one round trip, not two. On an error it closes those it
// made, and leaves subs nil.
func (h *Hub) SubscribeAll(ctx context.Context, wants []Want, subs []*Subscription) error {
	if len(subs) != len(wants) {
		panic("pubsub: SubscribeAll: subs and wants differ in length")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sharded, err := h.isSharded(ctx)
	if err != nil {
		return err
	}
	// A waiter joins its channels on every wait: up to two, with no
	// allocation.
	var addrBuf [2]string
	var waitBuf [2]confirm
	addrs, waits := addrBuf[:0], waitBuf[:0]
	for _, w := range wants {
		addr, err := h.addrFor(ctx, w.Name, sharded)
		if err != nil {
			return err
		}
		addrs = append(addrs, addr)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	for i, w := range wants {
		var c confirm
		subs[i], c = h.addLocked(w, addrs[i], sharded)
		waits = append(waits, c)
	}
	h.mu.Unlock()
	for _, c := range waits {
		if err := h.await(ctx, c); err != nil {
			for i, s := range subs {
				s.Close()
				subs[i] = nil
			}
			return err
		}
	}
	return nil
}

// addrFor returns the node whose connection carries channel name: "" but
// in sharded mode, where a channel lives on its slot's master.
func (h *Hub) addrFor(ctx context.Context, name string, sharded bool) (string, error) {
	if !sharded {
		return "", nil
	}
	return h.nodeFor(ctx, name)
}

// A confirm is what a new Subscription waits on until its channel is
// subscribed.
type confirm struct {
	name    string
	ready   <-chan struct{} // closed once the server confirmed
	failed  <-chan struct{} // closed when the SUBSCRIBE failed; nil once written
	sending *send
}

// addLocked registers w's waiter on its channel, which it creates, and
// queues the channel's SUBSCRIBE when none is on its way.
func (h *Hub) addLocked(w Want, addr string, sharded bool) (*Subscription, confirm) {
	ch := h.chans[w.Name]
	if ch != nil && ch.linger != nil {
		ch.linger.Stop()
		ch.linger = nil
	}
	if ch == nil {
		ch = &channel{name: w.Name, policy: w.Policy, counting: w.Counter, conn: h.connLocked(addr, sharded), ready: make(chan struct{})}
		ch.conn.channels++
		h.chans[w.Name] = ch
		ch.pending, ch.sendFail = true, true
	}
	sub := &Subscription{hub: h, ch: ch, need: max(w.Need, 1), key: w.Key, expect: 1, tap: w.tap, c: make(chan struct{}, 1)}
	switch {
	case w.tap:
		ch.taps = append(ch.taps, sub)
	case len(ch.subs) == 0:
		// The first waiter sets how messages wake (a tap may have made
		// the channel); the others pass the same.
		ch.policy, ch.counting = w.Policy, w.Counter
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
	c := confirm{name: w.Name, ready: ch.ready, sending: ch.sending}
	if c.sending != nil {
		c.failed = c.sending.failed
	}
	return sub, c
}

// await waits until c's channel is subscribed, its SUBSCRIBE failed, the
// Hub is closed or ctx is done.
func (h *Hub) await(ctx context.Context, c confirm) error {
	select {
	case <-c.ready:
		return nil
	case <-c.failed:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("pubsub: subscribe %s: %w", c.name, c.sending.err)
	case <-h.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}
