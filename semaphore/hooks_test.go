package semaphore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/semaphore"
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
	got := events.Got()
	want := []string{
		"acquired semaphore " + name + " waited=false",
		"abandoned semaphore " + name + " waited=true",
		"released semaphore " + name + " waited=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("hooks saw %q, want %q", got, want)
	}
}
