package permitsemaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// An id given to ReleaseAll more than once, however its hex is spelt,
// counts once: the permit is released and the answer is nil. A list with
// a permit not held releases none of them, repeats or not. Before,
// ReleaseAll(ctx, id, id) released the permit and returned ErrNotHeld,
// which says that none was.
func TestSemaphore_releaseAllRepeatedIDs(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	sem := permitsemaphore.New(client(t, s), semName(t))
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	counts := func(available, held int64) {
		t.Helper()
		a, err := sem.AvailablePermits(ctx)
		h, err2 := sem.AcquiredPermits(ctx)
		if a != available || h != held || err != nil || err2 != nil {
			t.Fatalf("available %d (%v), held %d (%v); want %d and %d", a, err, h, err2, available, held)
		}
	}
	ps, err := sem.AcquireN(ctx, 3, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := ps[0].ID(), ps[1].ID(), ps[2].ID()
	if err := sem.ReleaseAll(ctx, a, a); err != nil {
		t.Errorf("ReleaseAll(a, a) = %v, want nil", err)
	}
	counts(1, 2)
	if err := sem.ReleaseAll(ctx, b, strings.ToUpper(b), b); err != nil {
		t.Errorf("ReleaseAll(b, B, b) = %v, want nil", err)
	}
	counts(2, 1)
	if err := sem.ReleaseAll(ctx, c, c, a); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("ReleaseAll(c, c, a) with a released = %v, want ErrNotHeld", err)
	}
	counts(2, 1)
	if err := sem.ReleaseAll(ctx, c, c); err != nil {
		t.Errorf("ReleaseAll(c, c) = %v, want nil", err)
	}
	counts(3, 0)
	if err := sem.ReleaseAll(ctx, c, c); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("ReleaseAll(c, c) once released = %v, want ErrNotHeld", err)
	}
}
