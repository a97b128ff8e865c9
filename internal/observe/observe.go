// Package observe carries what the primitives do to the hooks that users
// set per go-redis client (latchkey.Hooks, latchkey.SetHooks). The hooks
// and their Event are defined and documented in the root package, so that
// go doc shows them; this package, which the root package imports, holds
// the per-client sink the root builds from them, in the client's runtime
// (internal/perclient).
package observe

import (
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

// An Event is what a primitive reports. It mirrors latchkey.Event field
// for field, which documents each field: the root package converts one to
// the other, so a field added here and not there fails to compile.
type Event struct {
	Kind      string
	Name      string
	Wait      time.Duration
	Waited    bool
	Reentered bool
	Err       error
}

// A Hook names one of latchkey.Hooks' fields.
type Hook int

// The hooks, one per field of latchkey.Hooks.
const (
	Acquired Hook = iota
	Released
	Lost
	RenewalFailed
	Abandoned
	NotReplicated
)

// A Sink receives the events of one client's primitives: which hook they
// are for, and the event.
type Sink func(Hook, Event)

// sink is a client's Sink, in the client's runtime (internal/perclient).
var sink = perclient.Declare(func(redis.UniversalClient) *atomic.Pointer[Sink] { return new(atomic.Pointer[Sink]) }, nil)

// Set makes s the sink of c's primitives; nil removes it.
func Set(c redis.UniversalClient, s Sink) {
	if s == nil {
		if p, ok := sink.Peek(c); ok {
			p.Store(nil)
		}
		return
	}
	sink.Get(c).Store(&s)
}

// For returns the sink of c, or nil.
func For(c redis.UniversalClient) Sink {
	if p, ok := sink.Peek(c); ok {
		if s := p.Load(); s != nil {
			return *s
		}
	}
	return nil
}

// Report tells c's sink, if c has one, that hook h has event e.
func Report(c redis.UniversalClient, h Hook, e Event) {
	if s := For(c); s != nil {
		s(h, e)
	}
}
