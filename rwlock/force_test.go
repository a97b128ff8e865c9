package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
)

// ForceUnlock frees a lock held by readers, wakes a writer waiting behind
// them at once, and the readers' handles find their holds lost.
func TestRWMutex_ForceUnlock(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := lockName(t)
	readers := rwlock.New(client(t, s), name, rwlock.WithWatchdogTimeout(time.Second))
	must(t, readers.RLock(ctx), readers.RLock(ctx))
	writer := rwlock.New(client(t, s), name)
	got := make(chan error, 1)
	go func() { got <- writer.Lock(ctx) }()
	waitSubscribers(t, s.Client(t), channelOf(name), 1)

	if held, err := rwlock.New(client(t, s), name).ForceUnlock(ctx); !held || err != nil {
		t.Fatalf("ForceUnlock of a read-held lock = %v, %v; want true, nil", held, err)
	}
	// The writer's retry bound is the readers' 1s lease: only the message
	// wakes it sooner, and only the force can have sent it.
	if err := within(t, got, 900*time.Millisecond, "the writer after ForceUnlock"); err != nil {
		t.Fatal(err)
	}
	// The two read holds are found lost one at a time, each by its own
	// renewal; Done and Err move on to the one still live until both are.
	lost := time.After(5 * time.Second)
	for i := 0; i < 2; i++ {
		select {
		case <-readers.ReadLock().Done():
		case <-lost:
			t.Fatal("the readers' holds were not reported lost within 5s")
		}
	}
	if !errors.Is(readers.ReadLock().Err(), latchkey.ErrLost) {
		t.Errorf("readers' Err = %v, want ErrLost", readers.ReadLock().Err())
	}
	must(t, writer.Unlock(ctx))
	if held, err := rwlock.New(client(t, s), name).ForceUnlock(ctx); held || err != nil {
		t.Errorf("ForceUnlock of a free lock = %v, %v; want false, nil", held, err)
	}
}
