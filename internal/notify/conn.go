package notify

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// conn is one subscriber connection and the goroutine that dispatches what
// arrives on it. Its fields are guarded by the Hub's mutex.
type conn struct {
	hub      *Hub
	addr     string // the cluster master in sharded mode, "" otherwise
	sharded  bool
	ps       *redis.PubSub
	started  bool
	closing  bool
	channels int
	linger   string // sharded: the last channel, left subscribed (see dropLocked)
	idle     *time.Timer
	exited   chan struct{}
	ops      []op // SUBSCRIBEs and UNSUBSCRIBEs to write, in order
	// refusals counts the commands the server refused since the last
	// confirmation, and again is the resubscription they wait for (see
	// Hub.refused).
	refusals int
	again    *time.Timer
	writing  bool // a goroutine writes ops
	taps     []op // taps' SUBSCRIBEs, queued after tapDelay (see queueTapLocked)
	tapTimer *time.Timer
}

// An op is a SUBSCRIBE of ch, or an UNSUBSCRIBE of name when ch is nil.
type op struct {
	ch   *channel
	name string
}

// A send is one SUBSCRIBE's write: failed is closed, err set, if it could
// not be written.
type send struct {
	failed chan struct{}
	err    error
}

// connLocked returns the connection for addr, creating it without I/O.
func (h *Hub) connLocked(addr string, sharded bool) *conn {
	if c := h.conns[addr]; c != nil {
		if c.idle != nil {
			c.idle.Stop()
			c.idle = nil
		}
		return c
	}
	c := &conn{hub: h, addr: addr, sharded: sharded, exited: make(chan struct{})}
	if sharded {
		// No channel yet: the first SSUBSCRIBE decides which master it dials.
		c.ps = h.client.SSubscribe(context.Background())
	} else {
		c.ps = h.client.Subscribe(context.Background())
	}
	h.conns[addr] = c
	return c
}

// dispatch reads the connection and hands what arrives to the Hub until
// the connection is closed.
func (c *conn) dispatch() {
	defer close(c.exited)
	Read(c.ps, c.hub.client, c.hub.cfg.healthInt, func(m any) {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
				c.hub.confirmed(c, m.Channel)
			}
		case *redis.Message:
			c.hub.deliver(c, m.Channel, m.Payload)
		case error:
			c.hub.refused(c)
		}
	})
}

// close closes the connection and waits for its dispatcher to exit. It must
// be called without the Hub's mutex held.
func (c *conn) close() error {
	c.hub.mu.Lock()
	c.closing = true
	if c.again != nil {
		c.again.Stop()
	}
	started := c.started
	c.hub.mu.Unlock()
	err := c.ps.Close()
	if started {
		<-c.exited
	}
	return err
}

// confirmed handles the server's reply to a SUBSCRIBE.
func (h *Hub) confirmed(c *conn, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.chans[name]
	if ch == nil || ch.conn != c {
		return
	}
	c.refusals = 0
	if ch.pending {
		ch.pending = false
		close(ch.ready)
		if ch.idle() {
			h.leftLocked(ch)
		}
		return
	}
	// A reply for a channel already confirmed means go-redis re-established
	// the connection and resubscribed: whatever was published meanwhile is
	// lost, so every waiter must look again.
	ch.tapLocked("", true)
	h.wakeLocked(ch, All)
}

// refusedPause is how long a connection whose command the server refused
// waits before it subscribes its channels again; it doubles, up to
// refusedPauseMax, while refusals go on.
const (
	refusedPause    = 100 * time.Millisecond
	refusedPauseMax = 5 * time.Second
)

// refused handles a command of c that the server refused, the connection
// staying up. It may have been a SUBSCRIBE, a resubscription after a
// reconnect among them, which leaves a channel deaf while go-redis counts
// it subscribed: every waiter of c looks again at once, and c subscribes
// its channels again after a pause (a confirmation of a channel already
// confirmed then wakes its waiters once more, as after a reconnect).
func (h *Hub) refused(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ch := range h.chans {
		if ch.conn == c && !ch.pending {
			ch.tapLocked("", true)
			h.wakeLocked(ch, All)
		}
	}
	if c.closing || c.again != nil {
		return
	}
	pause := min(refusedPause<<min(c.refusals, 6), refusedPauseMax)
	c.refusals++
	c.again = time.AfterFunc(pause, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		c.again = nil
		if c.closing {
			return
		}
		for _, ch := range h.chans {
			if ch.conn == c && ch.sending == nil {
				ch.sending = &send{failed: make(chan struct{})}
				c.queueLocked(op{ch: ch})
			}
		}
	})
}

// deliver wakes the waiters a message is meant for: the one a letter names
// (see Want.Key), or as many as the channel's policy says.
func (h *Hub) deliver(c *conn, name, payload string) {
	at := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.chans[name]
	if ch == nil || ch.conn != c {
		return
	}
	ch.tapLocked(payload, false)
	if len(ch.subs) == 0 {
		return
	}
	if ch.counting {
		k := ch.policy(payload)
		for _, s := range ch.subs {
			if k != All && k < s.need {
				continue // see Want.Counter
			}
			if s.count++; s.count >= s.expect {
				s.signal()
			}
		}
		return
	}
	if key, body, ok := keys.ParseLetter(payload); ok {
		var stray *Subscription
		for _, s := range ch.subs {
			if s.key == key {
				s.post(body, at)
				return
			}
			if s.key != "" && stray == nil {
				stray = s
			}
		}
		if stray != nil {
			stray.post("", at) // see Want.Key
		}
		return
	}
	h.wakeLocked(ch, ch.policy(payload))
}

// tapLocked hands the channel's taps a message, or tells them that
// messages may have been missed (see Hub.Tap).
func (ch *channel) tapLocked(payload string, missed bool) {
	for _, t := range ch.taps {
		if missed || len(t.heard) == maxHeard {
			t.missed = true
		} else {
			t.heard = append(t.heard, payload)
		}
		t.signal()
	}
}

// idle reports whether nobody listens on the channel, waiter or tap.
func (ch *channel) idle() bool { return len(ch.subs) == 0 && len(ch.taps) == 0 }

// wakeLocked hands n units of wake-up (every waiter when n is All) to the
// waiters that have no signal pending, oldest first; each takes the units it
// needs, and one that needs more than is left is skipped. If no waiter needs
// as few as n, the oldest is signalled anyway.
func (h *Hub) wakeLocked(ch *channel, n int) {
	if n == 0 {
		return
	}
	fits := false
	for _, s := range ch.subs {
		switch {
		case n < 0:
			if s.signal() {
				s.handOn = false // every waiter got its own
			}
		case n == 0:
			return
		case s.need <= n:
			fits = true
			if s.signal() {
				s.handOn = true
				n -= s.need
			}
		}
	}
	if n > 0 && !fits {
		for _, s := range ch.subs {
			if s.signal() {
				s.handOn = true
				return
			}
		}
	}
}

// leftLocked handles a channel whose last waiter left: it stays subscribed
// for the linger time, so that the next waiter of a busy channel finds it
// live, and is dropped after that unless a waiter came back.
func (h *Hub) leftLocked(ch *channel) {
	if h.cfg.linger <= 0 || ch.pending || ch.sendFail {
		h.dropLocked(ch)
		return
	}
	var t *time.Timer
	t = time.AfterFunc(h.cfg.linger, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.chans[ch.name] == ch && ch.linger == t && ch.idle() {
			ch.linger = nil
			h.dropLocked(ch)
		}
	})
	ch.linger = t
}

// dropLocked forgets a channel that has no waiters and no pending reply.
func (h *Hub) dropLocked(ch *channel) {
	delete(h.chans, ch.name)
	c := ch.conn
	c.channels--
	// In sharded mode the last channel stays subscribed until the idle close:
	// a sharded connection without channels would redial a random master.
	if c.channels > 0 || !c.sharded {
		c.queueLocked(op{name: ch.name})
	} else {
		c.linger = ch.name
	}
	if c.channels == 0 {
		c.idle = time.AfterFunc(h.cfg.idle, func() { h.idleClose(c) })
	}
}

func (h *Hub) idleClose(c *conn) {
	h.mu.Lock()
	if c.channels > 0 || h.conns[c.addr] != c {
		h.mu.Unlock()
		return
	}
	delete(h.conns, c.addr)
	h.mu.Unlock()
	_ = c.close()
}
