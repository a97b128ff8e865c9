package notify

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The write side of a subscriber connection: the SUBSCRIBEs and
// UNSUBSCRIBEs the Hub decides, queued in order and written by one
// goroutine per connection, batched where they can share a command.

// queueLocked queues a SUBSCRIBE (of o.ch) or an UNSUBSCRIBE (of o.name).
// The Hub decides them under its mutex, in the order the server must see
// them; one goroutine per connection writes them, outside the mutex, so
// that a connection being dialled, or a server that does not answer, holds
// up only the waiters of the channels written (each of which waits within
// its ctx), never the Hub and its other waiters.
func (c *conn) queueLocked(o op) {
	c.ops = append(c.ops, o)
	if !c.writing {
		c.writing = true
		go c.write()
	}
}

// maxBatch bounds the channels of one SUBSCRIBE or UNSUBSCRIBE.
const maxBatch = 256

// tapDelay is how long a tap's SUBSCRIBE waits for others to share its
// command. Taps are in no hurry (a hold taps once it has lasted a while),
// and come in crowds: ten thousand holds taken together cost a few dozen
// commands, not ten thousand.
const tapDelay = 50 * time.Millisecond

// queueTapLocked queues the SUBSCRIBE of a channel only a tap wants,
// after tapDelay, with the other taps queued meanwhile.
func (c *conn) queueTapLocked(o op) {
	c.taps = append(c.taps, o)
	if c.tapTimer != nil {
		return
	}
	c.tapTimer = time.AfterFunc(tapDelay, func() {
		c.hub.mu.Lock()
		defer c.hub.mu.Unlock()
		taps := c.taps
		c.taps, c.tapTimer = nil, nil
		for _, o := range taps {
			c.queueLocked(o)
		}
	})
}

// write writes the queued ops, in order, until none is left. Ops queued
// one after another of the same kind go in one command: a thousand holds
// whose alarms tap their channels together cost a few round trips.
func (c *conn) write() {
	h := c.hub
	h.mu.Lock()
	for len(c.ops) > 0 && !c.closing {
		subs, names := c.batchLocked()
		if len(names) == 0 {
			continue
		}
		h.mu.Unlock()
		ctx := context.Background() // a dial is bounded by DialTimeout
		var err error
		switch {
		case subs == nil && c.sharded:
			err = c.ps.SUnsubscribe(ctx, names...)
		case subs == nil:
			err = c.ps.Unsubscribe(ctx, names...)
		case c.sharded:
			err = c.ps.SSubscribe(ctx, names...)
		default:
			err = c.ps.Subscribe(ctx, names...)
		}
		h.mu.Lock()
		for _, ch := range subs {
			c.sentLocked(ch, err)
		} // a lost UNSUBSCRIBE only costs stray messages
	}
	c.ops, c.writing = nil, false
	h.mu.Unlock()
}

// channel is the name of the channel o subscribes to or unsubscribes from.
func (o op) channel() string {
	if o.ch != nil {
		return o.ch.name
	}
	return o.name
}

// batchLocked takes the ops at the head of the queue that go in one
// command: SUBSCRIBEs (subs, the channels written) or UNSUBSCRIBEs (subs
// nil), and their channels' names.
func (c *conn) batchLocked() (subs []*channel, names []string) {
	h := c.hub
	unsub := c.ops[0].ch == nil
	slot := keys.Slot(c.ops[0].channel())
	for len(c.ops) > 0 && len(names) < maxBatch && (c.ops[0].ch == nil) == unsub {
		o := c.ops[0]
		if c.sharded && keys.Slot(o.channel()) != slot {
			break // a sharded command's channels share a hash slot
		}
		c.ops = c.ops[1:]
		switch {
		case unsub:
			names = append(names, o.name)
		case h.chans[o.ch.name] != o.ch:
			// Its waiters left before it was written: an UNSUBSCRIBE may
			// follow, which costs nothing without it.
			o.ch.sending = nil
		default:
			subs, names = append(subs, o.ch), append(names, o.ch.name)
		}
	}
	return subs, names
}

// sentLocked records how ch's SUBSCRIBE went.
func (c *conn) sentLocked(ch *channel, err error) {
	s := ch.sending
	ch.sending = nil
	if err != nil {
		s.err = err
		close(s.failed)
		return
	}
	ch.sendFail = false
	if c.linger != "" {
		// The connection has a channel again: the one left subscribed can go.
		if c.linger != ch.name {
			c.ops = append(c.ops, op{name: c.linger})
		}
		c.linger = ""
	}
	if !c.started && !c.closing {
		// Started only after a successful write, so that in sharded mode the
		// connection is dialled to the master that owns the channel.
		c.started = true
		go c.dispatch()
	}
}
