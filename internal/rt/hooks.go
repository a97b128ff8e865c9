package rt

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// The hooks that users set per client (latchkey.Hooks, latchkey.SetHooks)
// are defined and documented in the root package, so that go doc shows
// them; the Runtime holds the sink the root builds from them.

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

// SetSink makes s the sink of client's primitives; nil removes it.
func SetSink(client redis.UniversalClient, s Sink) {
	if s == nil {
		if r := peek(client); r != nil {
			r.sink.Store(nil)
		}
		return
	}
	Of(client).sink.Store(&s)
}

// SinkOf returns the sink of client, or nil.
func SinkOf(client redis.UniversalClient) Sink {
	if r := peek(client); r != nil {
		if s := r.sink.Load(); s != nil {
			return *s
		}
	}
	return nil
}

// Report tells client's sink, if it has one, that hook h has event e.
func Report(client redis.UniversalClient, h Hook, e Event) {
	if s := SinkOf(client); s != nil {
		s(h, e)
	}
}
