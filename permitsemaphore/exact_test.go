package permitsemaphore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// Every count that a Lua number cannot hold exactly is refused with
// ErrInvalidPermits, at the call or by the script, and what AddPermits may
// add counts the permits held, which releases bring back to the count. The
// count left is always an integer, as Redisson reads it.
func TestSemaphore_countsBeyondLuaNumbersRefused(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	c := client(t, s)
	sem := permitsemaphore.New(c, name)
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
	}
	big := int64(1) << 60
	refused("AddPermits(2^60)", sem.AddPermits(ctx, big))
	refused("AddPermits(-2^60)", sem.AddPermits(ctx, -big))
	refused("SetPermits(2^53)", sem.SetPermits(ctx, most+1))
	_, err := sem.TrySetPermits(ctx, big)
	refused("TrySetPermits(2^60)", err)
	if err := sem.SetPermits(ctx, most); err != nil {
		t.Fatalf("SetPermits(MaxPermits): %v", err)
	}
	p, err := sem.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	count(most - 1)
	refused("AddPermits(1) with MaxPermits in all", sem.AddPermits(ctx, 1))
	count(most - 1)
	if err := p.Release(ctx); err != nil {
		t.Fatal(err)
	}
	count(most)
	if n, err := sem.Permits(ctx); n != most || err != nil {
		t.Errorf("Permits = %d, %v; want MaxPermits", n, err)
	}
	for range 2 {
		if err := sem.AddPermits(ctx, -most); err != nil {
			t.Fatalf("AddPermits(-MaxPermits): %v", err)
		}
	}
	refused("AddPermits(-1) at -MaxPermits", sem.AddPermits(ctx, -1))
	count(-most)
}
