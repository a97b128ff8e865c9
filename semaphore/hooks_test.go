package semaphore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/observe"
	"github.com/latchkey/latchkey/semaphore"
)

// The hooks of a client see its semaphores' acquisitions, the waits they
// give up and their releases, in order, with the kind and the name.
func TestHooks(t *testing.T) {
	_, c := mini(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		mu  sync.Mutex
		got []string
	)
	rec := func(what string) func(observe.Event) {
		return func(e observe.Event) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s %s %s waited=%v", what, e.Kind, e.Name, e.Waited))
		}
	}
	observe.Set(c, &observe.Hooks{Acquired: rec("acquired"), Released: rec("released"), Abandoned: rec("abandoned")})
	defer observe.Set(c, nil)
	name := semName(t)
	s := semaphore.New(c, name)
	if err := s.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.TryAcquire(ctx, 1, 20*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquire with none available = %v, %v", ok, err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 0); err == nil {
		t.Fatal("Release of 0 permits succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"acquired semaphore " + name + " waited=false",
		"abandoned semaphore " + name + " waited=true",
		"released semaphore " + name + " waited=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("hooks saw %q, want %q", got, want)
	}
}
