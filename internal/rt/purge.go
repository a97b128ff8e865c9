package rt

import (
	"context"
	"time"
)

// purgeMargin is how long after a grant's grace its purge is due: the
// server's clock ticks in milliseconds, and a purge that runs early
// finds nothing due.
const purgeMargin = 50 * time.Millisecond

// purgeFollow is how long a due purge waits for the next release of a
// client that released on the semaphore within as long before: that
// release's script gives back what is due first (see Refreshed), so a
// client that keeps releasing never sends a purge of its own.
const purgeFollow = 100 * time.Millisecond

// purgeTries bounds the purges of one semaphore that fail in a row (a
// server out of reach): its grants then come back with the next call on
// the semaphore, as before.
const purgeTries = 3

type purge struct {
	run   func(context.Context) (bool, error)
	grace time.Duration
	tries int
	// Under the Book's mu:
	timer    *time.Timer
	due      time.Time // when the grants it is for are all due back
	last     time.Time // the latest release begun before due (Refreshed)
	deferred bool      // it waited once for a release already
}

// Granted notes that a call of the client on the semaphore key granted
// permits, which a waiter takes within grace: run, the semaphore's purge,
// runs then, unless one is due already, and again as long as it reports
// that it granted permits anew or fails (a few times). A purge gives back
// what is due and nothing else, so that one run for several grants, or
// after they were taken, is harmless.
func (b *Book) Granted(key string, grace time.Duration, run func(context.Context) (bool, error)) {
	b.arm(key, &purge{run: run, grace: grace})
}

func (b *Book) arm(key string, p *purge) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.purges[key] != nil {
		return
	}
	b.purges[key] = p
	wait := p.grace + purgeMargin
	p.due, p.last, p.deferred = time.Now().Add(wait), time.Time{}, false
	p.timer = time.AfterFunc(wait, func() { b.fire(key, p) })
}

// Refreshed notes that a release of the client on the semaphore key,
// begun at start, went through: its script gave back, before anything
// else, every grant whose grace was over. A purge due by start has nothing
// left to do, and is dropped.
func (b *Book) Refreshed(key string, start time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.purges[key]
	switch {
	case p == nil:
	case start.Before(p.due):
		if start.After(p.last) {
			p.last = start
		}
	case p.timer.Stop():
		delete(b.purges, key)
	}
}

// fire runs p, the purge of key, now due; or, once, waits purgeFollow
// for a release if the client released on key within as long.
func (b *Book) fire(key string, p *purge) {
	b.mu.Lock()
	mine := b.purges[key] == p
	if mine && !p.deferred && time.Since(p.last) < purgeFollow {
		p.deferred = true
		p.timer = time.AfterFunc(purgeFollow, func() { b.fire(key, p) })
		b.mu.Unlock()
		return
	}
	if mine {
		delete(b.purges, key)
	}
	b.mu.Unlock()
	if !mine {
		return // Close ran it, or a release did its work
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	again, err := p.run(ctx)
	cancel()
	if err == nil {
		p.tries = 0
	} else if p.tries++; p.tries >= purgeTries {
		return
	}
	if again || err != nil {
		b.arm(key, p)
	}
}
