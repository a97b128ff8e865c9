package rt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// roundTrips counts a client's round trips: a command, or a pipeline.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// Looks given together share a round trip, and each gets its own answer.
func TestLook_batches(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rt.Close(c); _ = c.Close() })
	const n = 200
	for i := 0; i < n; i += 2 {
		mr.HSet("h", fmt.Sprint(i), "1") // the even fields exist
	}
	var trips roundTrips
	c.AddHook(&trips)
	var wg sync.WaitGroup
	wrong := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			look := redis.NewBoolCmd(context.Background(), "hexists", "h", fmt.Sprint(i))
			if err := rt.Of(c).Look(context.Background(), look); err != nil || look.Val() != (i%2 == 0) {
				wrong <- fmt.Sprintf("look %d = %v, %v", i, look.Val(), err)
			}
		})
	}
	wg.Wait()
	close(wrong)
	for w := range wrong {
		t.Error(w)
	}
	// All but a straggler on a loaded machine share one round trip.
	if got := trips.n.Load(); got > n/10 {
		t.Errorf("%d looks took %d round trips, want them batched", n, got)
	}
}

// A look whose ctx ends first returns ctx's error.
func TestLook_ctxEnds(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rt.Close(c); _ = c.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rt.Of(c).Look(ctx, redis.NewBoolCmd(ctx, "exists", "k")); !errors.Is(err, context.Canceled) {
		t.Errorf("Look with an ended ctx = %v, want context.Canceled", err)
	}
	// The batch it joined is still sent, and answers later looks.
	look := redis.NewIntCmd(context.Background(), "exists", "k")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := rt.Of(c).Look(ctx2, look); err != nil || look.Val() != 0 {
		t.Errorf("a later look = %d, %v; want 0, nil", look.Val(), err)
	}
}
