package rwlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/rwlock"
)

// Writers that follow one another without a gap, so that one of them is
// always waiting, do not starve readers: a reader held back by them enters
// after a write Unlock. Without that rule the readers here would wait for
// as long as the writers go on, and their context would end. Never a
// writer beside anyone; every read and every write is counted.
func TestRWMutex_readersNotStarved(t *testing.T) {
	s := server(t)
	name := lockName(t)
	const writers, readers, reads = 3, 4, 5
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	raw := client(t, s)
	var (
		inside        gauge
		wrote, readOK atomic.Int64
		wg            sync.WaitGroup
		stop          = make(chan struct{})
		errs          = make(chan error, writers+readers)
	)
	for range writers {
		w := rwlock.New(client(t, s), name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := w.Lock(ctx); err != nil {
					errs <- err
					return
				}
				inside.write(1)
				time.Sleep(2 * time.Millisecond)
				inside.write(-1)
				wrote.Add(1)
				if err := w.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	waitMarked(t, raw, name, 1) // the writers queue from now on

	var rg sync.WaitGroup
	for range readers {
		r := rwlock.New(client(t, s), name)
		rg.Add(1)
		go func() {
			defer rg.Done()
			for range reads {
				if err := r.RLock(ctx); err != nil {
					errs <- err
					return
				}
				inside.read(1)
				time.Sleep(time.Millisecond)
				inside.read(-1)
				readOK.Add(1)
				if err := r.RUnlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	rg.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("among back-to-back writers: %v", err)
	}
	if v := inside.violations.Load(); v != 0 {
		t.Errorf("%d times a writer was inside with someone else", v)
	}
	if n := readOK.Load(); n != readers*reads {
		t.Errorf("%d reads done, want %d", n, readers*reads)
	}
	t.Logf("%d reads among %d writes", readOK.Load(), wrote.Load())
}

// On miniredis, whose clock the test sets: the mark a waiting writer
// leaves lives a second past its last attempt. Left by a writer that died
// (nobody withdraws it, nobody publishes), it holds new readers back until
// that deadline on the server's clock, and not after.
func TestRWMutex_deadWriterMarkLifetime(t *testing.T) {
	m, raw := locktest.Mini(t)
	name := lockName(t)
	bg := context.Background()
	t0 := time.Now().Truncate(time.Millisecond)
	m.SetTime(t0)
	reader := rwlock.New(raw, name)
	must(t, reader.RLock(bg))

	// A live writer's mark: its deadline is at most a second away.
	wctx, stopWriter := context.WithCancel(bg)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := rwlock.New(raw, name).TryLock(wctx, time.Minute)
		gaveUp <- err
	}()
	waitMarked(t, raw, name, 1)
	marks := raw.ZRangeWithScores(bg, markerOf(name), 0, -1).Val()
	if len(marks) != 1 {
		t.Fatalf("marks = %v, want one", marks)
	}
	deadline := time.UnixMilli(int64(marks[0].Score))
	if life := deadline.Sub(t0); life <= 0 || life > time.Second {
		t.Fatalf("a waiting writer's mark lives %v, want at most 1s", life)
	}
	stopWriter()
	if err := within(t, gaveUp, 5*time.Second, "writer giving up"); !errors.Is(err, context.Canceled) {
		t.Fatalf("TryLock after its context ended = %v, want context.Canceled", err)
	}
	flight.Settle() // its clean-up runs off the caller's path
	if n := raw.Exists(bg, markerOf(name)).Val(); n != 0 {
		t.Fatal("the writer that gave up left its mark")
	}

	// The same mark, left behind by a writer that died.
	raw.ZAdd(bg, markerOf(name), marks[0])
	late := rwlock.New(raw, name)
	m.SetTime(deadline.Add(-time.Millisecond))
	if ok, err := late.TryRLock(bg, 0); ok || err != nil {
		t.Fatalf("TryRLock before the dead writer's deadline = %v, %v; want false", ok, err)
	}
	m.SetTime(deadline)
	if ok, err := late.TryRLock(bg, 0); !ok || err != nil {
		t.Fatalf("TryRLock at the dead writer's deadline = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(bg, markerOf(name)).Val(); n != 0 {
		t.Fatal("the dead writer's mark outlived its deadline")
	}
	must(t, late.RUnlock(bg), reader.RUnlock(bg))
}
