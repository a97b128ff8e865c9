package permitsemaphore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// Two licences are shared by every process. Each permit has a lease: if
// its holder dies, it comes back by itself when the lease ends.
func Example() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	licences := permitsemaphore.New(rdb, "licences")
	if _, err := licences.TrySetPermits(ctx, 2); err != nil {
		panic(err)
	}
	p, err := licences.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		panic(err)
	}
	defer p.Release(context.WithoutCancel(ctx))
	fmt.Println("id length:", len(p.ID()))
	n, _ := licences.AvailablePermits(ctx)
	fmt.Println("available:", n)
	// Output:
	// id length: 32
	// available: 1
}

// A holder that never releases its permit loses it when the lease ends;
// releasing it afterwards reports latchkey.ErrNotHeld.
func Example_expiry() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := permitsemaphore.New(rdb, "workers")
	_ = sem.SetPermits(ctx, 1)
	p, _ := sem.Acquire(ctx, permitsemaphore.Lease(50*time.Millisecond))
	time.Sleep(100 * time.Millisecond) // the holder stalls past its lease

	q, ok, _ := sem.TryAcquire(ctx, 0, permitsemaphore.Lease(time.Minute))
	fmt.Println("taken by another:", ok)
	err = p.Release(ctx)
	fmt.Println("stale release:", errors.Is(err, latchkey.ErrNotHeld))
	_ = q.Release(ctx)
	// Output:
	// taken by another: true
	// stale release: true
}

// A holder that needs more time extends its permit before the lease ends.
func ExamplePermit_Extend() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := permitsemaphore.New(rdb, "jobs")
	_ = sem.SetPermits(ctx, 1)
	p, _ := sem.Acquire(ctx, permitsemaphore.Lease(10*time.Second))
	if err := p.Extend(ctx, permitsemaphore.Lease(time.Minute)); err != nil {
		panic(err)
	}
	left, _ := sem.LeaseTime(ctx, p.ID())
	fmt.Println(left > 50*time.Second)
	_ = p.Release(ctx)
	// Output: true
}

// AcquireN takes several permits at once, all or none; ReleaseAll gives
// them back in one call.
func ExampleSemaphore_AcquireN() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := permitsemaphore.New(rdb, "gpu")
	_ = sem.SetPermits(ctx, 4)
	ps, err := sem.AcquireN(ctx, 3, permitsemaphore.Lease(time.Minute))
	if err != nil {
		panic(err)
	}
	_, ok, _ := sem.TryAcquireN(ctx, 2, 0, permitsemaphore.Lease(time.Minute))
	fmt.Println("two more:", ok)
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID()
	}
	_ = sem.ReleaseAll(ctx, ids...)
	n, _ := sem.AvailablePermits(ctx)
	fmt.Println("available:", n)
	// Output:
	// two more: false
	// available: 4
}

// A job of unknown length keeps its permit alive: the lease is short, so
// that the permit of a worker that dies comes back soon, and the client's
// watchdog renews it while the worker lives. Done closes, and the job's
// context is cancelled, if the permit is lost all the same.
func ExamplePermit_KeepAlive() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := permitsemaphore.New(rdb, "renders")
	_ = sem.SetPermits(ctx, 1)
	p, err := sem.Acquire(ctx, permitsemaphore.Lease(200*time.Millisecond))
	if err != nil {
		panic(err)
	}
	if err := p.KeepAlive(); err != nil {
		panic(err)
	}
	job := p.Context(ctx)
	select {
	case <-job.Done(): // the permit was lost: stop working
		fmt.Println("lost:", context.Cause(job))
	case <-time.After(700 * time.Millisecond): // the job, three leases and more
		_, err := sem.LeaseTime(ctx, p.ID())
		fmt.Println("still held:", err == nil)
	}
	_ = p.Release(ctx) // stops the renewals
	<-p.Done()
	fmt.Println("released:", p.Err())
	// Output:
	// still held: true
	// released: <nil>
}
