package election_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/election"
)

// Candidates on separate clients lead one at a time, each leadership's term
// above the one before, and each candidate leads in its turn.
func TestElection_oneLeaderAtATime(t *testing.T) {
	s := server(t)
	name := electionName(t)
	const candidates, rounds = 4, 3
	var (
		leaders atomic.Int32
		mu      sync.Mutex
		terms   []int64
		led     = map[string]int{}
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, candidates)
	var wg sync.WaitGroup
	for i := range candidates {
		e := election.New(client(t, s), name)
		value := fmt.Sprint("candidate-", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lctx, err := e.Campaign(ctx, value)
				if err != nil {
					errs <- err
					return
				}
				if n := leaders.Add(1); n != 1 {
					errs <- fmt.Errorf("%d leaders at once", n)
				}
				mu.Lock()
				terms = append(terms, e.Term())
				led[value]++
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				if lctx.Err() != nil {
					errs <- fmt.Errorf("leadership ended while leading: %v", context.Cause(lctx))
				}
				leaders.Add(-1)
				if err := e.Resign(ctx); err != nil {
					errs <- err
					return
				}
				<-lctx.Done()
				if cause := context.Cause(lctx); !errors.Is(cause, context.Canceled) {
					errs <- fmt.Errorf("after Resign the leadership's cause is %v", cause)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(terms) != candidates*rounds {
		t.Fatalf("%d leaderships, want %d", len(terms), candidates*rounds)
	}
	for i := 1; i < len(terms); i++ {
		if terms[i] <= terms[i-1] {
			t.Errorf("term %d is %d, not above the one before, %d", i, terms[i], terms[i-1])
		}
	}
	for v, n := range led {
		if n != rounds {
			t.Errorf("%s led %d times, want %d", v, n, rounds)
		}
	}
}

// Anyone reads and observes the leader: its value, each change of it, and
// its resignation.
func TestElection_leaderAndObserve(t *testing.T) {
	s := server(t)
	name := electionName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watcher := election.New(client(t, s), name)
	seen := watcher.Observe(ctx)
	next := func(what string) election.Leader {
		t.Helper()
		select {
		case l, ok := <-seen:
			if !ok {
				t.Fatalf("Observe closed before %s", what)
			}
			return l
		case <-time.After(bound):
			t.Fatalf("nothing observed for %s within %v", what, bound)
		}
		return election.Leader{}
	}
	if l := next("the start"); l != (election.Leader{}) {
		t.Fatalf("first observed %+v, want nobody", l)
	}

	a := election.New(client(t, s), name)
	if _, err := a.Campaign(ctx, "a:8080"); err != nil {
		t.Fatal(err)
	}
	l := next("a's leadership")
	if l.Value != "a:8080" || l.Term != a.Term() || l.Owner == "" {
		t.Fatalf("observed %+v, want a:8080 at term %d", l, a.Term())
	}
	if got, err := watcher.Leader(ctx); err != nil || got != l {
		t.Fatalf("Leader = %+v, %v; want %+v", got, err, l)
	}
	if err := a.Proclaim(ctx, "a:9090"); err != nil {
		t.Fatal(err)
	}
	if l2 := next("a's proclamation"); l2.Value != "a:9090" || l2.Term != l.Term || l2.Owner != l.Owner {
		t.Fatalf("observed %+v after Proclaim, want a:9090 at the same term", l2)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if l := next("a's resignation"); l != (election.Leader{}) {
		t.Fatalf("observed %+v after Resign, want nobody", l)
	}
	if err := a.Resign(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("second Resign = %v, want ErrNotHeld", err)
	}
	if err := a.Proclaim(ctx, "x"); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Proclaim after Resign = %v, want ErrNotHeld", err)
	}
	if n := s.Client(t).Exists(ctx, name, "latchkey_election:{"+name+"}").Val(); n != 0 {
		t.Errorf("%d of the lock and the record left after Resign", n)
	}
}

// A leadership lost (here its lock deleted) ends the leadership's context
// with ErrLost, and the next candidate takes over at a higher term.
func TestElection_loss(t *testing.T) {
	s := server(t)
	name := electionName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := election.New(client(t, s), name, election.WithLeaseTimeout(600*time.Millisecond))
	lctx, err := a.Campaign(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	term := a.Term()
	b := election.New(client(t, s), name)
	got := make(chan error, 1)
	go func() {
		_, err := b.Campaign(ctx, "b")
		got <- err
	}()
	s.Client(t).Del(ctx, name)
	select {
	case <-lctx.Done():
	case <-time.After(bound):
		t.Fatal("the leadership's context still live after its lock was deleted")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, latchkey.ErrLost) {
		t.Errorf("cause = %v, want ErrLost", cause)
	}
	if a.Term() != 0 {
		t.Errorf("Term after loss = %d, want 0", a.Term())
	}
	if got, ok := election.TermOf(lctx); !ok || got != term {
		t.Errorf("TermOf the lost leadership's context = %d, %v; want %d", got, ok, term)
	}
	if _, ok := election.TermOf(ctx); ok {
		t.Error("TermOf a context that is no leadership's says it is")
	}
	if err := a.Resign(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Resign after loss = %v, want ErrNotHeld", err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.Term() <= term {
		t.Errorf("next term %d, not above the lost one's %d", b.Term(), term)
	}
	if l, err := a.Leader(ctx); err != nil || l.Value != "b" {
		t.Errorf("Leader after the takeover = %+v, %v; want b", l, err)
	}
}

// A Campaign ends with its ctx and leaves nothing held; a Redisson client's
// hold of the name excludes candidates and shows as a leader without a
// value.
func TestElection_campaignEndsAndRedisson(t *testing.T) {
	s := server(t)
	name := electionName(t)
	ctx := context.Background()
	raw := s.Client(t)
	java := "5d3ab1b0-4f6c-4e2a-9c8d-0a1b2c3d4e5f:1" // a version 4 UUID and a thread id
	raw.HSet(ctx, name, java, 1)
	raw.PExpire(ctx, name, 20*time.Second)

	e := election.New(client(t, s), name)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := e.Campaign(short, "go"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Campaign against a Redisson holder = %v, want DeadlineExceeded", err)
	}
	if l, err := e.Leader(ctx); err != nil || l != (election.Leader{Owner: java}) {
		t.Errorf("Leader = %+v, %v; want the Redisson holder without value or term", l, err)
	}
	if e.Term() != 0 {
		t.Errorf("Term after a failed Campaign = %d", e.Term())
	}
	raw.Del(ctx, name)
	lctx, err := e.Campaign(ctx, "go")
	if err != nil {
		t.Fatalf("Campaign once the name is free = %v", err)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
}

// An observer whose client is closed gets an error no retry mends: its
// channel closes, as etcd's Observe does when its watcher is disrupted,
// rather than looking again every second for as long as ctx lives.
func TestElection_observeClosedClient(t *testing.T) {
	s := server(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := election.New(c, electionName(t)).Observe(ctx)
	select {
	case <-seen:
	case <-time.After(bound):
		t.Fatalf("nothing observed within %v", bound)
	}
	_ = latchkey.Close(c)
	_ = c.Close()
	for end := time.After(bound); ; {
		select {
		case _, ok := <-seen:
			if !ok {
				return
			}
		case <-end:
			t.Fatalf("Observe's channel still open %v after its client was closed", bound)
		}
	}
}
