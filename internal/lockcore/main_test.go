package lockcore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// The tests here are not parallel: they call wait.Settle, which waits for
// the clean-ups of every test.
func TestMain(m *testing.M) { redistest.Main(m) }

// bound is how long a test waits for what must happen; it only catches
// what never does, on a loaded machine under -race.
const bound = 10 * time.Second

// call is one call of the fake protocol, with what the caller passed.
type call struct {
	op        string // attempt, dequeue, resolve, release, force
	id        string // owner id
	reentrant bool
	reentry   string // Waiter.Reentry, for attempt, dequeue and resolve
	try       bool
	req       string // the request record
	key       string // the letter key
	ctxErr    error  // the ctx's error when called
}

// fake is a lockcore.Protocol whose answers the test scripts and whose
// calls it records. Its zero value grants every attempt and answers every
// release 1.
type fake struct {
	channel string // set by newLock

	// attempt answers the nth attempt (from 1); nil grants it with token n.
	attempt func(n int, w *lockcore.Waiter) (lockcore.Attempt, error)
	// release answers a release; nil answers 1.
	release func(id string, reentrant bool) rt.Reply
	resolve func() (bool, error) // nil answers false, nil
	force   rt.Reply             // nil Cmd answers 1
	del     rt.Reply             // nil Cmd answers 1
	gate    chan struct{}        // if set, Dequeue waits until it is closed

	mu    sync.Mutex
	calls []call
	n     int // attempts so far
}

func (f *fake) note(c call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func waiterCall(ctx context.Context, op string, w *lockcore.Waiter) call {
	return call{op: op, id: w.ID, reentrant: w.Reentrant, reentry: w.Reentry(), try: w.Try, req: w.Req, key: w.Key, ctxErr: ctx.Err()}
}

// ops returns the recorded calls of operation op, in order.
func (f *fake) ops(op string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

func (f *fake) Attempt(ctx context.Context, w *lockcore.Waiter) (lockcore.Attempt, error) {
	f.note(waiterCall(ctx, "attempt", w))
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if f.attempt == nil {
		return lockcore.Attempt{OK: true, Token: int64(n), Holds: 1}, nil
	}
	return f.attempt(n, w)
}

func (f *fake) Listen(w *lockcore.Waiter, s *wait.Spec) {
	s.Wake = wait.Channel{Name: f.channel, Policy: notify.WakeOne}
	s.Mail = w.Mail()
}

func (f *fake) Dequeue(ctx context.Context, w *lockcore.Waiter) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
		}
	}
	f.note(waiterCall(ctx, "dequeue", w))
}

func (f *fake) Resolve(ctx context.Context, w *lockcore.Waiter) (bool, error) {
	f.note(waiterCall(ctx, "resolve", w))
	if f.resolve == nil {
		return false, nil
	}
	return f.resolve()
}

func (f *fake) Release(ctx context.Context, id string, reentrant bool, req string) rt.Reply {
	f.note(call{op: "release", id: id, reentrant: reentrant, req: req, ctxErr: ctx.Err()})
	if f.release == nil {
		return reply(1, nil)
	}
	return f.release(id, reentrant)
}

func (f *fake) Alarm() hold.Alarm { return hold.Alarm{Channel: "forced"} }

func (f *fake) Force(ctx context.Context) rt.Reply {
	f.note(call{op: "force", ctxErr: ctx.Err()})
	if f.force.Cmd == nil {
		return reply(1, nil)
	}
	return f.force
}

func (f *fake) Delete(ctx context.Context) rt.Reply {
	f.note(call{op: "delete", ctxErr: ctx.Err()})
	if f.del.Cmd == nil {
		return reply(1, nil)
	}
	return f.del
}

// reply returns a script reply of v, or of err if it is not nil.
func reply(v int64, err error) rt.Reply {
	cmd := redis.NewCmd(context.Background())
	if err != nil {
		cmd.SetErr(err)
	} else {
		cmd.SetVal(v)
	}
	return rt.Reply{Cmd: cmd}
}

// refuse is an Attempt that finds the lock held, with no bound on the wait.
var refuse = lockcore.Attempt{Retry: -1}

// newLock returns a lock on f, on a miniredis of its own, with a fixed
// lease of a minute (no watchdog) unless cfg says otherwise.
func newLock(t *testing.T, f *fake, cfg ...lockopt.Common) (*lockcore.Lock, *miniredis.Miniredis) {
	t.Helper()
	mr, c := locktest.Mini(t)
	name := locktest.Name(t, "lockcore")
	f.channel = "lockcore-test:" + name
	common := lockopt.Common{Fixed: time.Minute}
	if len(cfg) > 0 {
		common = cfg[0]
	}
	return lockcore.New(c, "testlock", name, &common, f), mr
}

// eventually waits until cond holds, failing t after bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(time.Millisecond)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// mustLock locks l with ctx, failing t unless it acquires.
func mustLock(t *testing.T, l *lockcore.Lock, ctx context.Context) {
	t.Helper()
	ok, err := l.Lock(ctx, -1)
	if !ok || err != nil {
		t.Fatalf("Lock = %v, %v", ok, err)
	}
}

func (c call) String() string {
	return fmt.Sprintf("%s(id=%s reentrant=%v req=%q)", c.op, c.id, c.reentrant, c.req)
}
