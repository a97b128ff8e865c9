package latchkey_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
)

// recorder keeps what hooks were told, as "<hook> <kind> <name>".
type recorder struct {
	mu     sync.Mutex
	events []string
	last   map[string]latchkey.Event
}

func (r *recorder) hook(which string) func(latchkey.Event) {
	return func(e latchkey.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, fmt.Sprintf("%s %s %s", which, e.Kind, e.Name))
		if r.last == nil {
			r.last = make(map[string]latchkey.Event)
		}
		r.last[which] = e
	}
}

func (r *recorder) hooks() *latchkey.Hooks {
	return &latchkey.Hooks{
		Acquired: r.hook("acquired"), Released: r.hook("released"), Lost: r.hook("lost"),
		RenewalFailed: r.hook("renewal-failed"), Abandoned: r.hook("abandoned"), NotReplicated: r.hook("not-replicated"),
	}
}

// take returns the events so far, and forgets them.
func (r *recorder) take() ([]string, map[string]latchkey.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, last := r.events, r.last
	r.events, r.last = nil, nil
	return ev, last
}

// waitEvent waits until r has seen want.
func (r *recorder) waitEvent(t *testing.T, want string) latchkey.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, e := range r.events {
			if strings.HasPrefix(e, want+" ") {
				ev := r.last[want]
				r.mu.Unlock()
				return ev
			}
		}
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s event within 5s; saw %q", want, r.events)
	return latchkey.Event{}
}

func same(a, b []string) bool { return strings.Join(a, "|") == strings.Join(b, "|") }

func TestHooks_mutex(t *testing.T) {
	mr, c := redistest.Miniredis(t)
	ctx := context.Background()
	var r recorder
	latchkey.SetHooks(c, r.hooks())
	defer latchkey.SetHooks(c, nil)
	name := "hooks:" + t.Name()
	m := mutex.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, last := r.take(); !same(ev, []string{"acquired mutex " + name}) || last["acquired"].Waited {
		t.Fatalf("after Lock: %q, waited %v; want one acquisition that did not wait", ev, last["acquired"].Waited)
	}

	other := mutex.New(c, name)
	if ok, err := other.TryLock(ctx, 30*time.Millisecond); ok || err != nil {
		t.Fatalf("TryLock of a held lock = %v, %v", ok, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	err := other.Lock(cctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with a short ctx = %v", err)
	}
	ev, last := r.take()
	if !same(ev, []string{"abandoned mutex " + name, "abandoned mutex " + name}) {
		t.Fatalf("after two waits given up: %q", ev)
	}
	if e := last["abandoned"]; !errors.Is(e.Err, context.DeadlineExceeded) || e.Wait < 30*time.Millisecond {
		t.Errorf("abandoned by ctx: Err %v, Wait %v", e.Err, e.Wait)
	}

	done := make(chan error, 1)
	go func() { done <- other.Lock(ctx) }()
	time.Sleep(20 * time.Millisecond)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e := r.waitEvent(t, "acquired")
	if !e.Waited {
		t.Errorf("an acquisition that waited reports Waited false")
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	// The grant may reach the waiter before Unlock's own reply.
	if ev, _ := r.take(); !same(slices.Sorted(slices.Values(ev)), []string{"acquired mutex " + name, "released mutex " + name, "released mutex " + name}) {
		t.Errorf("handoff: %q", ev)
	}

	// A renewal that fails is reported, and a hold found gone is lost.
	w := mutex.New(c, name, mutex.WithWatchdogTimeout(300*time.Millisecond))
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mr.SetError("ERR injected")
	if e := r.waitEvent(t, "renewal-failed"); e.Err == nil {
		t.Errorf("renewal failure without its error")
	}
	mr.SetError("")
	c.Del(ctx, name)
	if e := r.waitEvent(t, "lost"); !errors.Is(e.Err, latchkey.ErrLost) || e.Kind != "mutex" || e.Name != name {
		t.Errorf("lost: %+v", e)
	}

	// A re-entry is an acquisition that says so; its hold ends once.
	r.take()
	octx := latchkey.WithOwner(ctx)
	for range 2 {
		if err := m.Lock(octx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := m.Unlock(octx); err != nil {
			t.Fatal(err)
		}
	}
	ev, last = r.take()
	if !same(ev, []string{"acquired mutex " + name, "acquired mutex " + name, "released mutex " + name}) || !last["acquired"].Reentered {
		t.Errorf("re-entry: %q, last acquisition Reentered %v", ev, last["acquired"].Reentered)
	}

	latchkey.SetHooks(c, nil)
	r.take()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	_ = m.Unlock(ctx)
	if ev, _ := r.take(); len(ev) != 0 {
		t.Errorf("hooks removed, yet told %q", ev)
	}
}

func TestLogHooks(t *testing.T) {
	var buf bytes.Buffer
	var r recorder
	h := latchkey.JoinHooks(latchkey.LogHooks(slog.New(slog.NewTextHandler(&buf, nil))), nil, r.hooks())
	h.Lost(latchkey.Event{Kind: "mutex", Name: "orders", Err: latchkey.ErrLost})
	h.Acquired(latchkey.Event{Kind: "mutex", Name: "orders"})
	out := buf.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "hold lost") || !strings.Contains(out, "name=orders") {
		t.Errorf("log: %q", out)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("acquisitions are logged: %q", out)
	}
	if ev, _ := r.take(); !same(ev, []string{"lost mutex orders", "acquired mutex orders"}) {
		t.Errorf("joined hooks: %q", ev)
	}
}
