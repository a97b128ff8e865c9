package wait

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// AbandonTimeout bounds the clean-up that runs after a call gave up.
const AbandonTimeout = 5 * time.Second

// lastRequest bounds a request that a detached call sent as its ride-out
// ended (a dial or a read may take go-redis's timeouts).
const lastRequest = 5 * time.Second

// Behind runs f, the clean-up after a call gave up, off the caller's path:
// detached from ctx's cancellation and bounded by AbandonTimeout. With
// stay, the caller waits for it while ctx is live: a wait budget that ran
// out with Redis answering leaves time to clean up, so that what the call
// left is gone when it returns; an error or an ended ctx leaves none.
func Behind(ctx context.Context, stay bool, f func(ctx context.Context)) {
	flight.MustContext(ctx)
	done := flight.Background(func() {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbandonTimeout)
		defer cancel()
		f(actx)
	})
	if !stay {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Detach returns the context a clean-up call (an unlock, a release, a
// count-down) sends with: ctx's values, an owner among them, without its
// cancellation or deadline, so that an ended ctx never strands a hold. It
// is bounded instead by client's ride-out (which Retry keeps to) and the
// time a last request may take.
func Detach(ctx context.Context, client redis.UniversalClient) (context.Context, context.CancelFunc) {
	flight.MustContext(ctx)
	if ctx.Done() != nil { // else nothing cuts it short already
		ctx = context.WithoutCancel(ctx)
	}
	// A clean-up is not cut short, and its bound counts a last request.
	return context.WithTimeout(flight.Patient(ctx), rt.RideOut(client)+lastRequest)
}

// Cleanup runs f, the whole of a clean-up call (an unlock, a release, a
// count-down: its requests and what their answers mean for the handle),
// with ctx detached (see Detach), and returns what f returns. If ctx ends
// first, Cleanup returns at once with an error matching ctx.Err() that
// says so, and f goes on in the background to its end, bounded by the
// ride-out: a clean-up never strands what it frees because its caller
// stopped waiting, and its requests, each resend-safe, apply once. A ctx
// that never ends runs f on the caller's goroutine.
func Cleanup[T any](ctx context.Context, client redis.UniversalClient, f func(ctx context.Context) (T, error)) (T, error) {
	dctx, cancel := Detach(ctx, client)
	if ctx.Done() == nil {
		defer cancel()
		return f(dctx)
	}
	var (
		v   T
		err error
	)
	done := flight.Background(func() {
		defer cancel()
		v, err = f(dctx)
	})
	select {
	case <-done:
		return v, err
	case <-ctx.Done():
	}
	select {
	case <-done: // answered as ctx ended: the answer counts
		return v, err
	default:
	}
	var zero T
	return zero, pending{ctx.Err()}
}

// pending is the error of a clean-up call whose ctx ended before its
// answer came (see Cleanup). It matches ctx's error.
type pending struct{ err error }

func (p pending) Error() string {
	return p.err.Error() + " (no answer yet: the clean-up goes on in the background and applies once)"
}

func (p pending) Unwrap() error { return p.err }

// Pending reports whether err is that of a clean-up call that returned
// before its answer, its clean-up going on (see Cleanup): the only error
// of Cleanup's own, which the caller wraps as it wraps f's.
func Pending(err error) bool {
	var p pending
	return errors.As(err, &p)
}
