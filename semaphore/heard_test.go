package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/semaphore"
)

// A waiter shows in the queue only once its letters can reach it: a
// release that grants to a deaf head takes it for gone and serves the
// next. b's client dials slowly, which holds up its Hub's subscription;
// c queues behind b, and the release must serve b first.
func TestGrant_queuedOnlyOnceHeard(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	slow := s.SlowDialClient(t, 1500*time.Millisecond)
	a := semaphore.New(client(t, s), name)
	if err := a.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	acquire := func(sem *semaphore.Semaphore, who string) {
		if sem.Acquire(ctx, 1) == nil {
			order <- who
			_ = sem.Release(ctx, 1)
		}
	}
	go acquire(semaphore.New(slow, name), "b")
	waitQueue(t, raw, name, 1)
	go acquire(semaphore.New(client(t, s), name), "c")
	waitQueue(t, raw, name, 2)
	if err := a.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	locktest.ExpectOrder(t, order, "b", "c")
}
