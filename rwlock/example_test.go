package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

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

	rw := rwlock.New(rdb, "config")
	if err := rw.RLock(ctx); err != nil {
		panic(err)
	}
	ok, _ := rw.TryRLock(ctx, 0) // each plain RLock is a reader of its own
	fmt.Println("another reader enters:", ok)
	ok, _ = rw.TryLock(ctx, 0)
	fmt.Println("a writer enters:", ok)

	// A writer waits for every reader to leave.
	written := make(chan error)
	go func() {
		err := rw.Lock(ctx)
		fmt.Println("writer entered")
		written <- err
	}()
	time.Sleep(50 * time.Millisecond)
	fmt.Println("readers leave")
	_ = rw.RUnlock(ctx)
	_ = rw.RUnlock(ctx) // plain holds are the handle's, whichever goroutine took them
	if err := <-written; err != nil {
		panic(err)
	}
	_ = rw.Unlock(ctx)
	// Output:
	// another reader enters: true
	// a writer enters: false
	// readers leave
	// writer entered
}

// A writer that also reads keeps its read hold after the write Unlock: the
// lock passes from write to read without letting another writer in.
func ExampleRWMutex_Lock_downgrade() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := latchkey.WithOwner(context.Background())
	other := context.Background()

	rw := rwlock.New(rdb, "cache")
	_ = rw.Lock(ctx)
	_ = rw.RLock(ctx) // the writer may read
	_ = rw.Unlock(ctx)

	readOK, _ := rw.TryRLock(other, 0)
	writeOK, _ := rw.TryLock(other, 0)
	fmt.Println("after the downgrade, reader:", readOK, "writer:", writeOK)
	_ = rw.RUnlock(other)
	_ = rw.RUnlock(ctx)
	// Output:
	// after the downgrade, reader: true writer: false
}

// An owner that holds only read locks cannot also write: it would wait for
// itself. Lock says so at once.
func ExampleRWMutex_Lock_wouldDeadlock() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := latchkey.WithOwner(context.Background())

	rw := rwlock.New(rdb, "cache")
	_ = rw.RLock(ctx)
	err = rw.Lock(ctx)
	fmt.Println(errors.Is(err, latchkey.ErrWouldDeadlock))
	_ = rw.RUnlock(ctx)
	fmt.Println(rw.Lock(ctx))
	_ = rw.Unlock(ctx)
	// Output:
	// true
	// <nil>
}

// The two sides as locks of their own, for code that takes any lock.
func ExampleRWMutex_ReadLock() {
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

	type locker interface {
		TryLock(context.Context, time.Duration) (bool, error)
		Unlock(context.Context) error
	}
	rw := rwlock.New(rdb, "report")
	for _, l := range []locker{rw.ReadLock(), rw.ReadLock(), rw.WriteLock()} {
		ok, err := l.TryLock(ctx, 10*time.Millisecond)
		fmt.Printf("%T: %v %v\n", l, ok, err)
	}
	_ = rw.ReadLock().Unlock(ctx)
	_ = rw.ReadLock().Unlock(ctx)
	// Output:
	// *rwlock.ReadLock: true <nil>
	// *rwlock.ReadLock: true <nil>
	// *rwlock.WriteLock: false <nil>
}

// RLocker adapts the read side to sync.Locker, as sync.RWMutex's does.
func ExampleRWMutex_RLocker() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	rw := rwlock.New(rdb, "table")
	var l sync.Locker = rw.RLocker()
	l.Lock()
	locked, _ := rw.ReadLock().IsLocked(context.Background())
	fmt.Println("read-locked:", locked)
	l.Unlock()
	locked, _ = rw.IsLocked(context.Background())
	fmt.Println("locked:", locked)
	// Output:
	// read-locked: true
	// locked: false
}

// A write hold taken with a fixed lease is extended while the work goes on,
// and its fencing token goes with every write.
func ExampleWriteLock_Extend() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client)
	ctx := context.Background()

	w := rwlock.New(client, "catalog", rwlock.WithLease(10*time.Second)).WriteLock()
	if err := w.Lock(ctx); err != nil {
		panic(err)
	}
	defer w.Unlock(ctx)
	if err := w.Extend(ctx, time.Minute); err != nil {
		panic(err)
	}
	fmt.Println("valid for over 50s:", time.Until(w.Deadline()) > 50*time.Second)
	fmt.Println("token:", w.Token() > 0)
	// Output:
	// valid for over 50s: true
	// token: true
}
