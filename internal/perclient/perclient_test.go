package perclient_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

type part struct {
	n      int // the how-manieth made
	closed atomic.Bool
}

var (
	made    atomic.Int32
	closes  []string // the parts' names, in the order they closed
	closeMu sync.Mutex
	errLast = errors.New("last part's close")

	first = perclient.Declare(func(redis.UniversalClient) *part { return &part{n: int(made.Add(1))} },
		func(p *part) error { p.closed.Store(true); note("first"); return nil })
	// second makes itself from the first part: a part may use others.
	second = perclient.Declare(func(c redis.UniversalClient) *part { return &part{n: first.Get(c).n * 100} },
		func(p *part) error { p.closed.Store(true); note("second"); return errLast })
)

func note(name string) {
	closeMu.Lock()
	closes = append(closes, name)
	closeMu.Unlock()
}

// One part per client, made once however many goroutines ask; Peek makes
// nothing; Close closes the parts in the reverse order of declaration,
// joins their errors, and a later Get starts afresh.
func TestPartLifecycle(t *testing.T) {
	closeMu.Lock()
	closes = nil // from an earlier run of the test (-count)
	closeMu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	other := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	defer other.Close()
	if _, ok := first.Peek(c); ok {
		t.Fatal("Peek found a part never made")
	}
	var wg sync.WaitGroup
	got := make([]*part, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = second.Get(c)
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("concurrent Gets made two parts for one client")
		}
	}
	f, ok := first.Peek(c)
	if !ok || got[0].n != f.n*100 {
		t.Fatalf("second part %d not made from the first %v", got[0].n, f)
	}
	if first.Get(other) == f {
		t.Fatal("two clients share a part")
	}
	if _, ok := second.Peek(other); ok {
		t.Fatal("Peek found a part made for another client")
	}
	if err := perclient.Close(c); !errors.Is(err, errLast) {
		t.Fatalf("Close = %v, want the parts' errors", err)
	}
	closeMu.Lock()
	order := closes
	closeMu.Unlock()
	if len(order) != 2 || order[0] != "second" || order[1] != "first" || !f.closed.Load() || !got[0].closed.Load() {
		t.Fatalf("parts closed as %v, want second then first", order)
	}
	if _, ok := first.Peek(c); ok {
		t.Fatal("a part outlived Close")
	}
	if first.Get(c) == f {
		t.Fatal("Get after Close returned the closed part")
	}
	if err := perclient.Close(c); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := perclient.Close(c); err != nil {
		t.Fatalf("Close of nothing = %v", err)
	}
	_ = perclient.Close(other)
}
