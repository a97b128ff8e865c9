package wait

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/settings"
	"github.com/redis/go-redis/v9"
)

// AbandonTimeout bounds the clean-up that runs after a call gave up.
const AbandonTimeout = 5 * time.Second

// lastRequest bounds a request that a detached call sent as its ride-out
// ended (a dial or a read may take go-redis's timeouts).
const lastRequest = 5 * time.Second

var behind sync.WaitGroup

// Behind runs f, the clean-up after a call gave up, off the caller's path:
// detached from ctx's cancellation and bounded by AbandonTimeout. With
// stay, the caller waits for it while ctx is live: a wait budget that ran
// out with Redis answering leaves time to clean up, so that what the call
// left is gone when it returns; an error or an ended ctx leaves none.
func Behind(ctx context.Context, stay bool, f func(ctx context.Context)) {
	done := make(chan struct{})
	behind.Add(1)
	go func() {
		defer behind.Done()
		defer close(done)
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbandonTimeout)
		defer cancel()
		f(actx)
	}()
	if !stay {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Settle waits until every clean-up that Behind started has ended. Tests
// call it before they check for leaked goroutines or for what a clean-up
// leaves.
func Settle() { behind.Wait() }

// Detach returns the context a clean-up call (an unlock, a release, a
// count-down) sends with: ctx's values, an owner among them, without its
// cancellation or deadline, so that an ended ctx never strands a hold. It
// is bounded instead by client's ride-out (which Retry keeps to) and the
// time a last request may take.
func Detach(ctx context.Context, client redis.UniversalClient) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settings.RideOut(client)+lastRequest)
}
