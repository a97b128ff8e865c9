package rwlock_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
	"go.uber.org/goleak"
)

// 10 readers and 3 writers on 3 clients, each taking holds at random
// (plain or with an owner, blocking or Try, reentrant, writers downgrading).
// Never a writer with anyone else inside; the writers' counter is exact.
func TestRWMutex_hammer(t *testing.T) {
	s := server(t)
	name := lockName(t)
	const readers, writers, rounds = 10, 3, 150
	handles := make([]*rwlock.RWMutex, 3)
	for i := range handles {
		handles[i] = rwlock.New(client(t, s), name)
	}
	var (
		readersIn, writersIn atomic.Int32
		maxReaders           atomic.Int32
		violations           atomic.Int32
		counter              int // written only by writers, read by readers: -race checks the exclusion
		seen, increments     atomic.Int64
		wg                   sync.WaitGroup
	)
	errs := make(chan error, readers+writers)
	read := func(g int) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(g), 1))
		rw := handles[g%len(handles)]
		for range rounds {
			ctx, depth := context.Background(), 1
			if rng.IntN(2) == 0 {
				ctx = latchkey.WithOwner(ctx)
				depth += rng.IntN(2) // reentrant, sometimes
			}
			held := 0
			for range depth {
				if rng.IntN(3) == 0 {
					ok, err := rw.TryRLock(ctx, 5*time.Millisecond)
					if err != nil {
						errs <- err
						return
					}
					if !ok {
						break
					}
				} else if err := rw.RLock(ctx); err != nil {
					errs <- err
					return
				}
				held++
			}
			if held > 0 {
				if n := readersIn.Add(1); n > maxReaders.Load() {
					maxReaders.Store(n) // racy maximum, a statistic only
				}
				if writersIn.Load() != 0 {
					violations.Add(1)
				}
				seen.Add(int64(counter))
				nap(rng)
				readersIn.Add(-1)
			}
			for range held {
				if err := rw.RUnlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}
	}
	write := func(g int) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(g), 2))
		rw := handles[g%len(handles)]
		for range rounds {
			ctx := latchkey.WithOwner(context.Background())
			if err := rw.Lock(ctx); err != nil {
				errs <- err
				return
			}
			if writersIn.Add(1) != 1 || readersIn.Load() != 0 {
				violations.Add(1)
			}
			counter++
			increments.Add(1)
			nap(rng)
			if rng.IntN(2) == 0 {
				if err := rw.Lock(ctx); err != nil {
					errs <- err
					return
				}
				counter++
				increments.Add(1)
				if err := rw.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
			downgrade := rng.IntN(3) == 0
			if downgrade {
				if err := rw.RLock(ctx); err != nil {
					errs <- err
					return
				}
			}
			writersIn.Add(-1)
			if err := rw.Unlock(ctx); err != nil {
				errs <- err
				return
			}
			if downgrade {
				readersIn.Add(1)
				if writersIn.Load() != 0 {
					violations.Add(1)
				}
				readersIn.Add(-1)
				if err := rw.RUnlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}
	}
	start := time.Now()
	for g := range readers {
		wg.Add(1)
		go read(g)
	}
	for g := range writers {
		wg.Add(1)
		go write(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d readers × %d and %d writers × %d rounds in %v; up to %d readers inside at once",
		readers, rounds, writers, rounds, time.Since(start), maxReaders.Load())
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d exclusion violations", v)
	}
	if int64(counter) != increments.Load() {
		t.Fatalf("counter = %d, want %d", counter, increments.Load())
	}
	if locked, _ := handles[0].IsLocked(context.Background()); locked {
		t.Fatal("lock still held after the hammer")
	}
}

// nap sometimes sleeps a little inside a hold, so that holds overlap.
func nap(rng *rand.Rand) {
	if rng.IntN(4) == 0 {
		time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
	}
}

// Readers blocked behind a writer all enter together right after its
// Unlock (Redisson's testWriteRead: 20 readers within 1s).
func TestRWMutex_writeUnlockWakesAllReaders(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	const readers, clients = 20, 4
	writer := rwlock.New(client(t, s), name)
	must(t, writer.Lock(bg))
	rws := make([]*rwlock.RWMutex, clients)
	for i := range rws {
		rws[i] = rwlock.New(client(t, s), name)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		entered []time.Time
		inside  = make(chan struct{})
		all     sync.WaitGroup
	)
	all.Add(readers)
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw := rws[i%clients]
			if err := rw.RLock(bg); err != nil {
				t.Error(err)
				all.Done()
				return
			}
			mu.Lock()
			entered = append(entered, time.Now())
			mu.Unlock()
			all.Done()
			<-inside // every reader holds at once
			if err := rw.RUnlock(bg); err != nil {
				t.Error(err)
			}
		}()
	}
	waitSubscribers(t, s.Client(t), channelOf(name), clients)
	time.Sleep(200 * time.Millisecond) // every reader past its post-subscribe attempt
	if n := len(entered); n != 0 {
		t.Fatalf("%d readers entered while written", n)
	}
	start := time.Now()
	must(t, writer.Unlock(bg))
	done := make(chan struct{})
	go func() { all.Wait(); close(done) }()
	within(t, done, 2*time.Second, "all readers after the write Unlock")
	close(inside)
	wg.Wait()
	lat := make([]time.Duration, len(entered))
	for i, at := range entered {
		lat[i] = at.Sub(start)
	}
	slices.Sort(lat)
	t.Logf("%d readers entered after the write Unlock: median %v, max %v", len(lat), lat[len(lat)/2], lat[len(lat)-1])
	if lat[len(lat)-1] > time.Second {
		t.Fatalf("last reader entered %v after the Unlock, want under 1s", lat[len(lat)-1])
	}
}

// Nothing is left running once the client's latchkey resources are closed.
func TestRWMutex_noGoroutineLeak(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	before := goleak.IgnoreCurrent()

	c := s.Client(t)
	rw := rwlock.New(c, name, rwlock.WithWatchdogTimeout(100*time.Millisecond))
	other := rwlock.New(c, name, rwlock.WithLease(time.Minute))
	ctx := latchkey.WithOwner(bg)
	must(t, rw.Lock(ctx), rw.RLock(ctx))
	if ok, err := other.TryRLock(bg, 50*time.Millisecond); ok || err != nil { // waits on the Hub
		t.Fatalf("TryRLock = %v, %v", ok, err)
	}
	got := make(chan error, 1)
	go func() { got <- other.Lock(bg) }()
	time.Sleep(50 * time.Millisecond)
	_ = rw.Unlock(ctx)
	_ = rw.RUnlock(ctx)
	must(t, within(t, got, 5*time.Second, "Lock"))
	_ = other.Unlock(bg)
	if err := rw.RLock(bg); err != nil { // a hold left to the watchdog
		t.Fatal(err)
	}
	must(t, latchkey.Close(c), c.Close())
	within(t, rw.ReadLock().Done(), time.Second, "hold of a closed watchdog")

	goleak.VerifyNone(t, before)
}
