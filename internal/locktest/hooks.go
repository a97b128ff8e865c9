package locktest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/latchkey/latchkey"
	"github.com/redis/go-redis/v9"
)

// Commands is a go-redis hook that counts the commands a client sends
// (pub/sub reads aside): all of them, or with Only set, those of that name,
// or with Key set, those naming that key (a script call among them). The
// UNLINKs that delete request records done with are housekeeping, which a
// client sends on a timer of its own, and are never counted.
// Add it with the client's AddHook.
type Commands struct {
	Only string // e.g. "get"; "" counts every command
	Key  string // e.g. a queue's key, to count a waiter's attempts; "": any
	n    atomic.Int64
}

// N returns the commands counted so far.
func (c *Commands) N() int64 { return c.n.Load() }

func (c *Commands) count(cmd redis.Cmder) {
	if strings.EqualFold(cmd.Name(), "unlink") {
		return
	}
	if (c.Only == "" || strings.EqualFold(cmd.Name(), c.Only)) && (c.Key == "" || HasArg(cmd.Args(), c.Key)) {
		c.n.Add(1)
	}
}

// HasArg reports whether args, a command's, hold s, as a string or as
// the fmt.Stringer a handle boxes its keys as (see keys.Lock.Box).
func HasArg(args []any, s string) bool {
	return slices.ContainsFunc(args, func(a any) bool {
		st, ok := a.(fmt.Stringer)
		return a == any(s) || ok && st.String() == s
	})
}

func (c *Commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *Commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *Commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// Events records what a client's hooks are told (see latchkey.Hooks), as
// "<hook> <kind> <name> waited=<Waited>".
type Events struct {
	mu  sync.Mutex
	got []string
}

// Hooks returns hooks that record into e.
func (e *Events) Hooks() *latchkey.Hooks {
	rec := func(what string) func(latchkey.Event) {
		return func(ev latchkey.Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.got = append(e.got, fmt.Sprintf("%s %s %s waited=%v", what, ev.Kind, ev.Name, ev.Waited))
		}
	}
	return &latchkey.Hooks{
		Acquired: rec("acquired"), Released: rec("released"), Lost: rec("lost"),
		RenewalFailed: rec("renewal-failed"), Abandoned: rec("abandoned"), NotReplicated: rec("not-replicated"),
	}
}

// Got returns what was recorded so far.
func (e *Events) Got() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}
