package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
)

// A waiter shows in the queue only once its letters can reach it. A
// release that finds the head of the queue deaf takes it for gone and
// grants the next, so a waiter queued before its Hub's subscription was
// confirmed could lose its turn to one queued after it. Here b's client
// dials slowly, which holds up its Hub's subscription; c queues behind b,
// and the release must grant b first.
func TestMutex_queuedOnlyOnceHeard(t *testing.T) {
	s := redistest.StartServer(t)
	name := lockName(t)
	ctx := context.Background()
	raw := s.Client(t)
	queue := "latchkey_lock_queue:{" + name + "}"

	slowClient := s.SlowDialClient(t, 1500*time.Millisecond) // its Hub's subscription is late

	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	lock := func(m *mutex.Mutex, who string) {
		if m.Lock(ctx) == nil {
			order <- who
			_ = m.Unlock(ctx)
		}
	}
	go lock(mutex.New(slowClient, name), "b")
	waitQueue(t, raw, queue, 1)
	go lock(mutex.New(client(t, s), name), "c")
	waitQueue(t, raw, queue, 2)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	locktest.ExpectOrder(t, order, "b", "c")
}
