package fairlock

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lockcore"
)

// An attempt that finds the lock taken tells the waiter its place in the
// queue, which a polling waiter's schedule follows (wait.Spec.Rank): one
// told nothing looks as seldom as the head, however the queue moves.
func TestAttemptRank(t *testing.T) {
	m, _ := scriptMutex(t)
	p := m.l.Proto.(*protocol)
	ctx := context.Background()
	attempt := func(id string) (bool, int64) {
		t.Helper()
		w := &lockcore.Waiter{ID: id, Key: id, Polling: true, Started: time.Now(), Rank: -7}
		a, err := p.Attempt(ctx, w)
		if err != nil {
			t.Fatalf("%s's attempt: %v", id, err)
		}
		return a.OK, w.Rank
	}
	if ok, _ := attempt("a:1"); !ok {
		t.Fatal("a did not take the free lock")
	}
	for i, id := range []string{"b:1", "c:1", "d:1", "c:1"} {
		want := map[string]int64{"b:1": 0, "c:1": 1, "d:1": 2}[id]
		if ok, rank := attempt(id); ok || rank != want {
			t.Errorf("attempt %d, by %s: acquired %v, rank %d; want %d", i, id, ok, rank, want)
		}
	}
	if err := p.Release(ctx, "a:1", false, "").Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c:1", "d:1"} {
		want := map[string]int64{"c:1": 0, "d:1": 1}[id]
		if ok, rank := attempt(id); ok || rank != want {
			t.Errorf("%s's attempt once b was granted the lock: acquired %v, rank %d; want %d", id, ok, rank, want)
		}
	}
}
