package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
)

// Polling waiters (latchkey.SetPolling) still queue in arrival order and
// take the lock in that order from the releases' grants, with no Hub
// connection.
func TestMutex_pollingFIFO(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := lockName(t)
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	raw := s.Client(t)
	queue := "latchkey_lock_queue:{" + name + "}"
	const waiters = 4
	order := make(chan int, waiters)
	errs := make(chan error, waiters)
	for i := range waiters {
		c := client(t, s)
		latchkey.SetPolling(c, true)
		m := mutex.New(c, name)
		go func() {
			if err := m.Lock(ctx); err != nil {
				errs <- err
				return
			}
			order <- i
			time.Sleep(5 * time.Millisecond)
			errs <- m.Unlock(ctx)
		}()
		// The next waiter starts once this one is queued.
		for raw.LLen(ctx, queue).Val() != int64(i+1) {
			if ctx.Err() != nil {
				t.Fatalf("waiter %d never queued", i)
			}
			time.Sleep(time.Millisecond)
		}
		if st := pubsub.Shared(c).Stats(); st.Connections != 0 {
			t.Fatalf("a polling client's Hub has %d connections", st.Connections)
		}
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for want := range waiters {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d took the lock in place %d", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiter %d never took the lock", want)
		}
	}
	for range waiters {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
