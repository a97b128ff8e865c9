package permitsemaphore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// The hooks of a client see its semaphores' acquisitions, the waits they
// give up and their releases, in order, with the kind and the name.
func TestHooks(t *testing.T) {
	_, c := mini(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var events locktest.Events
	latchkey.SetHooks(c, events.Hooks())
	defer latchkey.SetHooks(c, nil)
	name := semName(t)
	s := permitsemaphore.New(c, name)
	if err := s.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p, err := s.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TryAcquire(ctx, 20*time.Millisecond, permitsemaphore.Forever); ok || err != nil {
		t.Fatalf("TryAcquire with none available = %v, %v", ok, err)
	}
	if err := p.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx); err == nil {
		t.Fatal("a second Release of the permit succeeded")
	}
	got := events.Got()
	want := []string{
		"acquired permitsemaphore " + name + " waited=false",
		"abandoned permitsemaphore " + name + " waited=true",
		"released permitsemaphore " + name + " waited=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("hooks saw %q, want %q", got, want)
	}
}
