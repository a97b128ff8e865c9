package latchkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/election"
)

// An election on every backend: a candidate waits behind the leader, takes
// over on its resignation at a higher term, and an observer sees each
// leader and value.
func init() {
	register("election/campaign, observe, resign", func(t *testing.T, e *env) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		seen := election.New(e.Client(), e.Name).Observe(ctx)
		next := func() election.Leader {
			t.Helper()
			select {
			case l := <-seen:
				return l
			case <-time.After(10 * time.Second):
				t.Fatal("nothing observed within 10s")
			}
			return election.Leader{}
		}
		if l := next(); l != (election.Leader{}) {
			t.Fatalf("observed %+v before any campaign, want nobody", l)
		}
		a, b := election.New(e.Client(), e.Name), election.New(e.Client(), e.Name)
		if _, err := a.Campaign(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if l := next(); l.Value != "a" || l.Term != a.Term() {
			t.Fatalf("observed %+v, want a at term %d", l, a.Term())
		}
		won := make(chan error, 1)
		go func() {
			_, err := b.Campaign(ctx, "b")
			won <- err
		}()
		if err := a.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-won; err != nil {
			t.Fatal(err)
		}
		for {
			l := next() // nobody may show between the two
			if l.Value == "b" {
				if l.Term != b.Term() || b.Term() <= 0 {
					t.Fatalf("observed %+v, want b at term %d", l, b.Term())
				}
				break
			}
			if l != (election.Leader{}) {
				t.Fatalf("observed %+v between a and b", l)
			}
		}
		if err := b.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
