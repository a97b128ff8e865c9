// Package flight is the one home of a request's flight: a call returns by
// its ctx's deadline, a request it leaves on its way is tracked so that
// the call's clean-up can wait for it, and an error says whether the
// request may have applied and whether a retry may cure it.
package flight

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A call returns by its ctx's deadline. go-redis applies a ctx's deadline
// to its reads only with ContextTimeoutEnabled, which is off by default:
// against a stalled server, or a network that drops packets, a read lasts
// the client's ReadTimeout (and go-redis may send the request again),
// seconds past the caller's deadline. So, on such a client, a request made
// with Bounded under a deadline goes from a goroutine of its own, and the
// caller returns when ctx ends, leaving the request on its way: the server
// may still apply it. A call that tracks its requests (Track) finds the
// ones so left in its Flights, and its clean-up waits for them (Land)
// before it undoes what they may have done, lest a request apply behind
// the undo: a fresh owner id's take, say, which has no request record to
// cancel it, would hold the lock until its lease ran out.
//
// The goroutine costs the request a hand-over between goroutines (tens of
// µs on a small VM), so it is spent only where the contract needs it: a
// ctx without a deadline is cancelled at go-redis's pace (between
// requests, or when a read times out), as a client that applies deadlines
// itself is held to them by go-redis.

// Bounded returns f(ctx), or, if ctx's deadline passes first, the zero T
// and false, having added f's request to ctx's Flights, if any. It calls f
// on the caller's goroutine unless Needed.
func Bounded[T any](ctx context.Context, client redis.UniversalClient, f func(context.Context) T) (T, bool) {
	if !Needed(ctx, client) {
		return f(ctx), true
	}
	answer := make(chan T, 1)
	landed := make(chan struct{})
	go func() {
		defer close(landed)
		answer <- f(ctx)
	}()
	select {
	case r := <-answer:
		return r, true
	case <-ctx.Done():
	}
	select {
	case r := <-answer: // answered as ctx ended: the answer counts
		return r, true
	default:
	}
	if fl, _ := ctx.Value(flightsKey{}).(*Flights); fl != nil {
		fl.mu.Lock()
		fl.left = append(fl.left, landed)
		fl.mu.Unlock()
	}
	var zero T
	return zero, false
}

// Query returns f(ctx), a request that changes nothing, or, if ctx's
// deadline passes first, an error matching ctx.Err() (see Bounded).
func Query[T any](ctx context.Context, client redis.UniversalClient, f func(context.Context) (T, error)) (T, error) {
	if !Needed(ctx, client) {
		return f(ctx)
	}
	type answer struct {
		v   T
		err error
	}
	a, ok := Bounded(ctx, client, func(ctx context.Context) answer {
		v, err := f(ctx)
		return answer{v, err}
	})
	if !ok {
		return a.v, ctx.Err()
	}
	return a.v, a.err
}

// Needed reports whether a request of client under ctx goes from a
// goroutine of its own: not when ctx has no deadline, when client applies
// ctx deadlines itself (ContextTimeoutEnabled), or when ctx is Patient. A
// hot path asks first, and spares the closure it would hand Bounded.
func Needed(ctx context.Context, client redis.UniversalClient) bool {
	MustContext(ctx)
	_, ok := ctx.Deadline()
	return ok && !appliesDeadlines(client) && ctx.Value(patientKey{}) == nil
}

// appliesDeadlines reports whether go-redis bounds client's reads and
// writes by a ctx's deadline.
func appliesDeadlines(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// MustContext panics if ctx is nil: a programming error, which a call
// reports in its caller's goroutine before it sends anything or starts a
// goroutine, where a panic would end the process.
func MustContext(ctx context.Context) {
	if ctx == nil {
		panic("latchkey: nil Context: pass context.Background() or context.TODO() if there is no other")
	}
}

type patientKey struct{}

// Patient returns ctx marked for a caller whose requests wait for their
// answers as long as go-redis does: a clean-up call (see wait.Detach), and a
// caller that bounds its wait itself and wants every answer, a late one
// too (a RedLock's node calls: a late grant is undone when it arrives).
func Patient(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

// Flights are the requests that one call's sends left on their way when
// its ctx ended (see Bounded). The zero value is ready to use.
type Flights struct {
	mu   sync.Mutex
	left []<-chan struct{}
}

type flightsKey struct{}

// Track returns a ctx that adds to f the requests that Bounded sends with
// it and leaves on their way when it ends. A ctx that never ends needs
// none.
func Track(ctx context.Context, f *Flights) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithValue(ctx, flightsKey{}, f)
}

// Land waits until every request left in f was answered, or go-redis gave
// up on it, or ctx ends; it reports whether they all did first.
func (f *Flights) Land(ctx context.Context) bool {
	f.mu.Lock()
	left := f.left
	f.left = nil
	f.mu.Unlock()
	for i, l := range left {
		select {
		case <-l:
		case <-ctx.Done():
			f.mu.Lock()
			f.left = append(f.left, left[i:]...)
			f.mu.Unlock()
			return false
		}
	}
	return true
}
