package fairlock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// BenchmarkPolling: 4 clients set to poll (latchkey.SetPolling), each a
// process of its own, take one lock in turn and hold it 1ms; the fair
// lock and, as the baseline, the mutex. acq/s is acquisitions per second;
// compare the two within one run (times swing between runs).
//
//	go test -run '^$' -bench Polling -benchtime 400x ./fairlock
func BenchmarkPolling(b *testing.B) {
	type locker interface {
		Lock(ctx context.Context) error
		Unlock(ctx context.Context) error
	}
	for _, kind := range []struct {
		name string
		open func(c *redis.Client, name string) locker
	}{
		{"mutex", func(c *redis.Client, name string) locker { return mutex.New(c, name) }},
		{"fairlock", func(c *redis.Client, name string) locker { return fairlock.New(c, name) }},
	} {
		b.Run(kind.name, func(b *testing.B) {
			const clients, hold = 4, time.Millisecond
			s := redistest.SharedServer(b)
			name := lockName()
			ctx := context.Background()
			locks := make([]locker, clients)
			for i := range locks {
				c := redis.NewClient(&redis.Options{Addr: s.Addr()})
				latchkey.SetPolling(c, true)
				b.Cleanup(func() {
					_ = latchkey.Close(c)
					_ = c.Close()
				})
				locks[i] = kind.open(c, name)
			}
			var (
				mu   sync.Mutex
				left = b.N
				errs = make(chan error, clients)
				wg   sync.WaitGroup
			)
			b.ResetTimer()
			start := time.Now()
			for _, l := range locks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						if left == 0 {
							mu.Unlock()
							return
						}
						left--
						mu.Unlock()
						if err := l.Lock(ctx); err != nil {
							errs <- err
							return
						}
						time.Sleep(hold)
						if err := l.Unlock(ctx); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acq/s")
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
		})
	}
}
