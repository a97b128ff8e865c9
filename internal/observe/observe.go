// Package observe carries the hooks that users set per go-redis client (see
// latchkey.SetHooks) to the places where the primitives act. Looking hooks
// up costs one atomic load while no client has any.
package observe

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// An Event is one thing a primitive did: which primitive, and what the
// hook that receives it needs to know.
type Event struct {
	// Kind is the primitive's package: "mutex", "fairlock", "rwlock",
	// "semaphore", "permitsemaphore", "countdownlatch" or "redlock".
	Kind string
	// Name is the primitive's name.
	Name string
	// Wait is how long the call waited (Acquired, Abandoned).
	Wait time.Duration
	// Waited reports whether the call had to wait: its first attempt did
	// not acquire (Acquired).
	Waited bool
	// Reentered reports an owner's re-entry of a hold it had through the
	// handle already (Acquired): that hold ends, and Released or Lost is
	// reported, once, with its last count.
	Reentered bool
	// Err is the cause (Lost, RenewalFailed, NotReplicated), or the
	// context's error that ended a wait (Abandoned; nil when the wait's
	// own budget ran out).
	Err error
}

// Hooks are functions that latchkey calls when the primitives of one client
// act. Any of them may be nil. They are called synchronously, from the
// goroutine that acted (a Lock call's, or the watchdog's): they must be
// quick, and must not call the primitive that reports to them.
type Hooks struct {
	// Acquired: a lock, read or write lock or permits were acquired (a
	// re-entry too: see Event.Reentered), or a latch's Wait returned
	// because the latch opened.
	Acquired func(Event)
	// Released: a hold ended with its release (the last count of a
	// reentrant hold), or permits were released.
	Released func(Event)
	// Lost: a hold ended without its release: its lease ran out, it was
	// found gone, or it could not be renewed in time.
	Lost func(Event)
	// RenewalFailed: a renewal of a hold failed with an error; it is
	// retried until the hold's lease runs out, when Lost follows.
	RenewalFailed func(Event)
	// Abandoned: a call that waited gave up: its context ended, or its own
	// wait budget ran out.
	Abandoned func(Event)
	// NotReplicated: an acquisition was undone because too few replicas
	// acknowledged it.
	NotReplicated func(Event)
}

var (
	set      atomic.Int32 // clients with hooks
	registry sync.Map     // redis.UniversalClient -> *Hooks
)

// Set makes h the hooks of c's primitives; nil removes them.
func Set(c redis.UniversalClient, h *Hooks) {
	if h == nil {
		if _, ok := registry.LoadAndDelete(c); ok {
			set.Add(-1)
		}
		return
	}
	if _, loaded := registry.Swap(c, h); !loaded {
		set.Add(1)
	}
}

// For returns the hooks of c, or nil.
func For(c redis.UniversalClient) *Hooks {
	if set.Load() == 0 || c == nil {
		return nil
	}
	h, _ := registry.Load(c)
	hooks, _ := h.(*Hooks)
	return hooks
}

// Report calls the hook that pick selects from c's hooks with e, if c has
// hooks and that one is set.
func Report(c redis.UniversalClient, pick func(*Hooks) func(Event), e Event) {
	if h := For(c); h != nil {
		if f := pick(h); f != nil {
			f(e)
		}
	}
}

// The pickers of Report.
func Acquired(h *Hooks) func(Event)      { return h.Acquired }
func Released(h *Hooks) func(Event)      { return h.Released }
func Lost(h *Hooks) func(Event)          { return h.Lost }
func RenewalFailed(h *Hooks) func(Event) { return h.RenewalFailed }
func Abandoned(h *Hooks) func(Event)     { return h.Abandoned }
func NotReplicated(h *Hooks) func(Event) { return h.NotReplicated }
