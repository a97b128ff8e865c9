package latchkey

import (
	"context"
	"log/slog"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/redis/go-redis/v9"
)

// Hooks are functions that latchkey calls when the primitives of a client
// act: acquisitions, releases, lost holds, failed renewals, waits given
// up and acquisitions undone for want of replicas. Any field may be nil.
// They are called synchronously, from the goroutine that acted (a Lock
// call's, or the watchdog's), so they must be quick and must not call the
// primitive that reports to them. latchkey never logs or records anything
// on its own: LogHooks logs, and the module
// github.com/latchkey/latchkey/otel records OpenTelemetry metrics.
type Hooks struct {
	// Acquired: a lock, read or write lock or permits were acquired (a
	// re-entry too: see Event.Reentered), or a latch's Wait returned
	// because the latch opened. Event.Wait and Event.Waited say how long
	// the call waited.
	Acquired func(Event)
	// Released: a hold ended with its release (the last count of a
	// reentrant hold), or permits were released.
	Released func(Event)
	// Lost: a hold ended without its release: its lease ran out, it was
	// found gone, or it could not be renewed in time. Event.Err says why.
	Lost func(Event)
	// RenewalFailed: a renewal of a hold failed with Event.Err; it is
	// retried until the hold's lease runs out, when Lost follows.
	RenewalFailed func(Event)
	// Abandoned: a call that waited gave up after Event.Wait: its context
	// ended (Event.Err), or its own wait budget ran out (Event.Err nil).
	Abandoned func(Event)
	// NotReplicated: an acquisition was undone because too few replicas
	// acknowledged it (Event.Err matches ErrNotReplicated).
	NotReplicated func(Event)
}

// An Event is what a hook is told: the primitive's kind and name, and
// what the hook needs to know of what happened.
type Event struct {
	// Kind is the primitive's package: "mutex", "fairlock", "rwlock",
	// "semaphore", "permitsemaphore", "countdownlatch" or "redlock".
	Kind string
	// Name is the primitive's name, as given to its New.
	Name string
	// Wait is how long the call waited (Acquired, Abandoned, NotReplicated).
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

// pick returns the field of h that hook names.
func (h *Hooks) pick(hook rt.Hook) func(Event) {
	switch hook {
	case rt.Acquired:
		return h.Acquired
	case rt.Released:
		return h.Released
	case rt.Lost:
		return h.Lost
	case rt.RenewalFailed:
		return h.RenewalFailed
	case rt.Abandoned:
		return h.Abandoned
	case rt.NotReplicated:
		return h.NotReplicated
	}
	return nil
}

// SetHooks makes h the hooks of every primitive of this process that uses
// client, handles made earlier included; nil removes them. Hooks are kept
// per client, not per handle: to tell handles apart, use Event.Name. A
// RedLock reports to the hooks of its first node's client; a MultiLock's
// members report as themselves. Close forgets the hooks.
func SetHooks(client redis.UniversalClient, h *Hooks) {
	if h == nil {
		rt.SetSink(client, nil)
		return
	}
	rt.SetSink(client, func(hook rt.Hook, e rt.Event) {
		if f := h.pick(hook); f != nil {
			f(Event(e))
		}
	})
}

// JoinHooks returns hooks that call each of hs in turn, skipping nil ones.
func JoinHooks(hs ...*Hooks) *Hooks {
	join := func(hook rt.Hook) func(Event) {
		var fs []func(Event)
		for _, h := range hs {
			if f := h.pickNil(hook); f != nil {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return nil
		}
		return func(e Event) {
			for _, f := range fs {
				f(e)
			}
		}
	}
	return &Hooks{
		Acquired:      join(rt.Acquired),
		Released:      join(rt.Released),
		Lost:          join(rt.Lost),
		RenewalFailed: join(rt.RenewalFailed),
		Abandoned:     join(rt.Abandoned),
		NotReplicated: join(rt.NotReplicated),
	}
}

// pickNil is pick on hooks that may be nil.
func (h *Hooks) pickNil(hook rt.Hook) func(Event) {
	if h == nil {
		return nil
	}
	return h.pick(hook)
}

// LogHooks returns hooks that log, on logger, what an operator needs to
// know: a lost hold and an acquisition undone for want of replicas at
// level Error, a failed renewal (retried until the lease runs out) at
// level Warn. Acquisitions, releases and waits are not logged.
func LogHooks(logger *slog.Logger) *Hooks {
	log := func(level slog.Level, msg string) func(Event) {
		return func(e Event) {
			logger.LogAttrs(context.Background(), level, msg,
				slog.String("kind", e.Kind), slog.String("name", e.Name), slog.Any("error", e.Err))
		}
	}
	return &Hooks{
		Lost:          log(slog.LevelError, "latchkey: hold lost"),
		RenewalFailed: log(slog.LevelWarn, "latchkey: renewal failed"),
		NotReplicated: log(slog.LevelError, "latchkey: acquisition not replicated"),
	}
}
