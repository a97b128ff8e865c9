package rt

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A Book is what a client keeps of the permits its semaphore calls may
// leave parked: granted to a waiter that never takes them, they are off
// the count until a call on the semaphore finds their grace over. Two
// kinds of entries:
//
//   - the semaphores on which a call of the client granted permits: the
//     client runs their purge once the grace is over (Granted), so that a
//     grant nobody took is back in the count that every reader sees while
//     the client that made it lives;
//   - the waiters of the client that may have been granted permits: the
//     hand-back of one that gave up (GiveUp.Back) runs off its caller's
//     path, and Close runs it again, at once, for those it did not finish;
//     the waiters that Close ends (those of the shared Hub) leave the
//     queue, giving back a grant to them, before their Hub closes.
//
// A Book closes first of the client's runtime (see Close).
type Book struct {
	mu      sync.Mutex
	closed  bool
	purges  map[string]*purge
	giveUps map[*GiveUp]struct{}
}

// closeWait bounds how long Close waits for the hand-backs and purges.
const closeWait = 2 * time.Second

// keepFailed is how long a hand-back that failed is kept for Close to try
// again: its grant's grace is long over by then, and the purge of the
// client that granted it, or the next call, has put it back.
const keepFailed = time.Minute

// Parked returns the client's Book of parked permits.
func (r *Runtime) Parked() *Book { return r.parked }

func newBook() *Book {
	return &Book{purges: make(map[string]*purge), giveUps: make(map[*GiveUp]struct{})}
}

// A GiveUp is the hand-back of what one waiter of the client may hold
// without knowing it: a grant to its queue entry, or what an attempt took
// whose answer never came. It is registered while the waiter waits
// (Waiting), dropped once the waiter acquired (Took) or its hand-back
// went through (Back).
type GiveUp struct {
	book   *Book
	shared bool // the waiter waits through the shared Hub, which Close ends
	settle func(context.Context) error
	leave  func(context.Context) error

	turn    chan struct{} // held by the hand-back under way
	gone    atomic.Bool   // the waiter gave up
	failed  time.Time     // of the latest hand-back that failed; under turn
	settled bool          // under turn
	done    bool          // under turn
}

// Waiting registers a waiter of the client. settle, run once, finds out
// what an attempt that went unanswered took and gives it back (it must
// also make sure that a copy of that attempt still on its way takes
// nothing); leave takes the waiter's entry out of the queue and gives back
// a grant to it, and must be harmless to repeat. shared says that the
// waiter waits through the client's shared Hub, so that Close ends it.
func (b *Book) Waiting(shared bool, settle, leave func(context.Context) error) *GiveUp {
	g := &GiveUp{book: b, shared: shared, settle: settle, leave: leave, turn: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return g // Close is done with this Book: the hand-back is the waiter's own
	}
	if len(b.giveUps) >= 64 {
		b.pruneLocked()
	}
	b.giveUps[g] = struct{}{}
	return g
}

// pruneLocked drops the give-ups whose hand-back failed long ago.
func (b *Book) pruneLocked() {
	for g := range b.giveUps {
		select {
		case g.turn <- struct{}{}:
			if !g.failed.IsZero() && time.Since(g.failed) > keepFailed {
				delete(b.giveUps, g)
			}
			<-g.turn
		default: // a hand-back is under way
		}
	}
}

// Took drops g: its waiter acquired, and holds what it was granted.
func (g *GiveUp) Took() { g.book.drop(g) }

// GaveUp notes that g's waiter gave up: Close hands back what it may hold.
func (g *GiveUp) GaveUp() { g.gone.Store(true) }

// Back hands back what g's waiter, which gave up, may hold: first, if
// unsure (an attempt went unanswered), what such an attempt took; then
// its queue entry and a grant to it. It returns nil once that is done,
// now or before, and otherwise the error that stopped it, leaving the rest
// for Close. Hand-backs of one waiter run one at a time.
func (g *GiveUp) Back(ctx context.Context, unsure bool) error {
	g.gone.Store(true)
	select {
	case g.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.turn }()
	if g.done {
		return nil
	}
	if unsure && !g.settled {
		if err := g.settle(ctx); err != nil {
			g.failed = time.Now()
			return err
		}
		g.settled = true
	}
	if err := g.leave(ctx); err != nil {
		g.failed = time.Now()
		return err
	}
	g.done = true
	g.book.drop(g)
	return nil
}

// Abandon hands back what g's waiter left as it gave up (a wait's clean-up
// step, with ctx its bound): at once if sure, and otherwise, since an
// attempt that went unanswered may have applied and must be settled
// first, in the background, for up to settleFor (how long that attempt's
// request record lives).
func (g *GiveUp) Abandon(ctx context.Context, unsure bool, settleFor time.Duration) {
	if !unsure {
		_ = g.Back(ctx, false)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), settleFor)
		defer cancel()
		_ = g.Back(ctx, true)
	}()
}

func (b *Book) drop(g *GiveUp) {
	b.mu.Lock()
	delete(b.giveUps, g)
	b.mu.Unlock()
}

// close hands back, within closeWait, what the client's waiters that gave
// up may hold, settling unanswered attempts first (an attempt still on its
// way could otherwise apply behind the hand-back); takes those that Close
// ends out of the queue (they may still be granted, and then take the
// grant: their own hand-back, as they end, settles the rest); and runs the
// purges due after the client's grants at once: grants whose grace is not
// over by then are their waiters' to take, or to give back.
func (b *Book) close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	var purges []*purge
	for _, p := range b.purges {
		if p.timer.Stop() { // under mu: a deferring purge sets its timer there
			purges = append(purges, p)
		}
	}
	giveUps := b.giveUps
	b.purges, b.giveUps = nil, nil
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range purges {
		wg.Go(func() { _, _ = p.run(ctx) })
	}
	for g := range giveUps {
		switch {
		case g.gone.Load():
			wg.Go(func() { _ = g.Back(ctx, true) })
		case g.shared:
			wg.Go(func() { _ = g.leave(ctx) })
		}
	}
	wg.Wait()
	return nil
}
