package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
)

// BenchmarkMutex_uncontended measures Lock+Unlock of a free lock on a real
// server; BenchmarkPing is the round-trip yardstick (the floor is two).
func BenchmarkMutex_uncontended(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []mutex.Option
	}{
		{"watchdog", nil},
		{"lease", []mutex.Option{mutex.WithLease(8 * time.Second)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := mutex.New(client(b, server(b)), lockName(b), bc.opts...)
			ctx := context.Background()
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
