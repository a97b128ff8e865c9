package wait

import (
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A Place is a permit waiter's place in a semaphore's queue, as the wait
// loop sees it (a Mail and a Hint): its letters, which ask it to
// attempt (its attempt takes the grant), and Redisson's releases, which
// grant nothing and which it counts on Redisson's channel. Only the head
// of the queue attempts on those: its attempt hands what it leaves to
// those behind it, so that a release the head cannot use wakes no herd.
type Place struct {
	// Rank is the waiter's place, 0 at the head, as its latest attempt
	// answered; a letter "next" makes it the head.
	Rank     int64
	key      string
	redisson Channel
	heard    bool
	polling  bool // its client polls (see Spec)
}

// EntryHub is the Hub id that the queue entries of a waiter of client
// waiting through hub carry, the channel its letters go to: none for a
// client that polls (latchkey.SetPolling), whose waiters read what a letter
// would say by their next attempt, and whom a release never takes for gone.
func EntryHub(client redis.UniversalClient, hub *notify.Hub) string {
	if rt.Polling(client) {
		return ""
	}
	return hub.ID()
}

// NewPlace returns the place of a waiter whose letters go to key, counting
// the messages on redisson, Redisson's channel, that its policy counts as
// at least redisson.Need.
func NewPlace(key string, redisson Channel) *Place {
	return &Place{key: key, redisson: redisson}
}

// Spec returns the wait loop's Spec of the permit waiter at p: a call of
// the primitive kind named name on client, whose attempts are call, woken
// on hub's own letter channel under the prefix hubs.
func (p *Place) Spec(client redis.UniversalClient, kind, name string, hub *notify.Hub, hubs string, call Call) Spec {
	p.polling = rt.Polling(client)
	return Spec{
		Rank:   func() int64 { return p.Rank },
		Client: client,
		Event:  rt.Event{Kind: kind, Name: name},
		Hub:    hub,
		Wake:   Channel{Name: hubs + ":" + hub.ID(), Policy: notify.WakeOne},
		Mail:   p,
		Hint:   p,
		Call:   call,
	}
}

// Key returns the letters' key.
func (p *Place) Key() string { return p.key }

// Letter reads a letter: never done on a letter alone, since the attempt
// takes the grant.
func (p *Place) Letter(body string, at time.Time) (bool, time.Duration) {
	within, head := handoff.TakeLetter(body, at)
	if head {
		p.Rank = 0 // heed Redisson's messages from now on
	}
	return false, within
}

// Live notes whether the waiter's letters can reach it yet.
func (p *Place) Live(heard bool) { p.heard = heard }

// Queue reports whether the waiter's attempt may join the queue: not
// before its letters can reach it, since a release that grants to a
// waiter nobody hears drops it (see Mail.Live), unless it polls, and
// has no letters (see EntryHub).
func (p *Place) Queue() bool { return p.heard || p.polling }

// Channel returns Redisson's channel, counted.
func (p *Place) Channel() Channel { return p.redisson }

// Active reports that the channel is always counted.
func (p *Place) Active() bool { return true }

// Expect wakes the waiter at every counted message.
func (p *Place) Expect() int { return 1 }

// Heard makes the head attempt.
func (p *Place) Heard(int) (bool, time.Duration) { return p.Rank <= 0, 0 }

// Handed decodes the reply of a semaphore script that may grant permits to
// waiters, {v, ..., handed}: it returns v, and whether the call granted
// some, which its client then gives back if nobody took them within the
// Grace (see rt.Book).
func Handed(cmd *redis.Cmd) (v int64, handed bool, err error) {
	vs, err := scripts.Ints(cmd)
	switch {
	case err != nil:
		return 0, false, err
	case len(vs) < 2:
		return 0, false, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
	}
	return vs[0], vs[len(vs)-1] == 1, nil
}
