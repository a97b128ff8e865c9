package mutex_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
)

// BenchmarkMutex_uncontended measures Lock+Unlock of a free lock on a real
// server; BenchmarkPing is the round-trip yardstick (the floor is two).
// Under a deadline, on a client without ContextTimeoutEnabled, Lock's
// request goes from a goroutine of its own (see flight.Bounded).
func BenchmarkMutex_uncontended(b *testing.B) {
	for _, bc := range []struct {
		name     string
		opts     []mutex.Option
		deadline bool
	}{
		{"watchdog", nil, false},
		{"lease", []mutex.Option{mutex.WithLease(8 * time.Second)}, false},
		{"watchdog-deadline", nil, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := mutex.New(client(b, server(b)), lockName(b), bc.opts...)
			ctx := context.Background()
			if bc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPing(b *testing.B) {
	c := client(b, server(b))
	ctx := context.Background()
	for b.Loop() {
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMutex_hotlock measures handoffs: 8 handles, each on its own
// client, loop Lock, hold 1ms, Unlock, think 1ms on one lock; an op is one
// acquisition.
func BenchmarkMutex_hotlock(b *testing.B) {
	s := server(b)
	name := lockName(b)
	const workers = 8
	ms := make([]*mutex.Mutex, workers)
	for i := range ms {
		ms[i] = mutex.New(client(b, s), name)
	}
	ctx := context.Background()
	var n atomic.Int64
	errs := make(chan error, workers)
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n.Add(1) <= int64(b.N) {
				if err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond)
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
