package semaphore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/semaphore"
)

// Every count that a Lua number cannot hold exactly is refused with
// ErrInvalidPermits: at the call where the argument alone says so, by the
// script where the sum would leave the range. The count left is always an
// integer, as Redisson reads it, and the semaphore goes on working. Before,
// AddPermits(2^60) stored "1.152921504606847e+18", and above 2^53 the count
// was off by one.
func TestSemaphore_countsBeyondLuaNumbersRefused(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	c := client(t, s)
	sem := semaphore.New(c, name)
	const most = latchkey.MaxPermits
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, latchkey.ErrInvalidPermits) {
			t.Errorf("%s = %v, want ErrInvalidPermits", what, err)
		}
	}
	count := func(want int64) {
		t.Helper()
		v, err := c.Get(ctx, name).Result()
		if n, perr := strconv.ParseInt(v, 10, 64); err != nil || perr != nil || n != want {
			t.Fatalf("GET %s = %q, %v; want the integer %d", name, v, err, want)
		}
		if n, err := sem.AvailablePermits(ctx); n != want || err != nil {
			t.Fatalf("AvailablePermits = %d, %v; want %d", n, err, want)
		}
	}
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	big := int64(1) << 60
	refused("AddPermits(2^60)", sem.AddPermits(ctx, big))
	refused("AddPermits(-2^60)", sem.AddPermits(ctx, -big))
	refused("AddPermits(2^53)", sem.AddPermits(ctx, most+1))
	refused("SetPermits(2^53)", sem.SetPermits(ctx, most+1))
	_, err := sem.TrySetPermits(ctx, big)
	refused("TrySetPermits(2^60)", err)
	refused("Release(2^60)", sem.Release(ctx, big))
	refused("Acquire(2^60)", sem.Acquire(ctx, big))
	_, err = sem.TryAcquire(ctx, big, 0)
	refused("TryAcquire(2^60)", err)
	count(1)

	// At the edge, the script refuses what would go past it.
	if err := sem.AddPermits(ctx, most-1); err != nil {
		t.Fatalf("AddPermits up to MaxPermits: %v", err)
	}
	count(most)
	refused("AddPermits(1) at MaxPermits", sem.AddPermits(ctx, 1))
	refused("Release(1) at MaxPermits", sem.Release(ctx, 1))
	count(most)
	if err := sem.Acquire(ctx, most); err != nil {
		t.Fatalf("Acquire(MaxPermits): %v", err)
	}
	count(0)
	if err := sem.AddPermits(ctx, -most); err != nil {
		t.Fatalf("AddPermits(-MaxPermits): %v", err)
	}
	refused("AddPermits(-1) at -MaxPermits", sem.AddPermits(ctx, -1))
	count(-most)

	// A Redisson client reads the count, and the semaphore still works.
	if err := sem.SetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	count(2)
}
