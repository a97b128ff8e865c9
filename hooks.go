package latchkey

import (
	"context"
	"log/slog"

	"github.com/latchkey/latchkey/internal/observe"
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
type Hooks = observe.Hooks

// An Event is what a hook is told: the primitive's kind and name, and
// what the hook needs to know of what happened.
type Event = observe.Event

// SetHooks makes h the hooks of every primitive of this process that uses
// client, handles made earlier included; nil removes them. Hooks are kept
// per client, not per handle: to tell handles apart, use Event.Name. A
// RedLock reports to the hooks of its first node's client; a MultiLock's
// members report as themselves. While no client has hooks, looking for
// them costs one atomic load.
func SetHooks(client redis.UniversalClient, h *Hooks) {
	observe.Set(client, h)
}

// JoinHooks returns hooks that call each of hs in turn, skipping nil ones.
func JoinHooks(hs ...*Hooks) *Hooks {
	join := func(pick func(*Hooks) func(Event)) func(Event) {
		var fs []func(Event)
		for _, h := range hs {
			if h != nil && pick(h) != nil {
				fs = append(fs, pick(h))
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
		Acquired:      join(observe.Acquired),
		Released:      join(observe.Released),
		Lost:          join(observe.Lost),
		RenewalFailed: join(observe.RenewalFailed),
		Abandoned:     join(observe.Abandoned),
		NotReplicated: join(observe.NotReplicated),
	}
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
