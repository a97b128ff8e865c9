package semaphore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// A Redisson client's release (INCRBY, then PUBLISH of the new count on
// Redisson's channel) grants nothing, but wakes the latchkey waiters it
// leaves enough permits for, on every client; they are served in order.
func TestGrant_redissonRelease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- semaphore.New(client(t, s), name).Acquire(ctx, 1) }()
	waitQueue(t, raw, name, 1)
	go func() { second <- semaphore.New(client(t, s), name).Acquire(ctx, 2) }()
	waitQueue(t, raw, name, 2)
	time.Sleep(20 * time.Millisecond)
	redisson := func(k int64) {
		t.Helper()
		v := raw.IncrBy(ctx, name, k).Val()
		if err := raw.Publish(ctx, "redisson_sc:{"+name+"}", v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	redisson(1)
	woken(t, first, "the first waiter", func() error { return nil })
	select {
	case err := <-second:
		t.Fatalf("the waiter for 2 returned %v with none available", err)
	case <-time.After(50 * time.Millisecond):
	}
	redisson(2)
	woken(t, second, "the waiter for 2", func() error { return nil })
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count at the end = %q, want \"0\"", v)
	}
}

// letters collects the letters written to every Hub's channel of the
// semaphore name.
func letters(t *testing.T, raw *redis.Client, name string) <-chan string {
	t.Helper()
	ctx := context.Background()
	sub := raw.PSubscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:*")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	go func() {
		for m := range sub.Channel() {
			out <- m.Payload
		}
	}()
	return out
}

// expectLetters reads the letters that arrive within 100ms and checks that
// they are, in order, want: "<n>" a grant of n permits, "next" a head told.
func expectLetters(t *testing.T, got <-chan string, want ...string) {
	t.Helper()
	var kinds []string
	for quiet := time.After(100 * time.Millisecond); ; {
		select {
		case l := <-got:
			f := strings.Fields(l)
			if len(f) < 2 {
				t.Fatalf("letter %q", l)
			}
			kinds = append(kinds, f[1])
			continue
		case <-quiet:
		}
		break
	}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("letters %q, want %q", kinds, want)
	}
}

// Only the waiters a release satisfies are told, in order, and nobody else
// sends a command: a release of fewer permits than the head of the queue
// needs tells nobody (the head blocks those behind it, and Redisson's
// message of the permits left wakes none of them), a release of enough
// tells the head, and the one behind it that it is next.
func TestGrant_onlySatisfiedTold(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	mail := letters(t, raw, name)
	var sent locktest.Commands // the commands of the waiters behind the head
	type waiter struct {
		n    int64
		done chan error
	}
	ws := []waiter{{n: 3}, {n: 1}, {n: 1}}
	for i := range ws {
		c := client(t, s)
		if i > 0 {
			c.AddHook(&sent)
		}
		sem := semaphore.New(c, name)
		ws[i].done = make(chan error, 1)
		go func() { ws[i].done <- sem.Acquire(ctx, ws[i].n) }()
		waitQueue(t, raw, name, int64(i+1))
	}
	time.Sleep(20 * time.Millisecond) // every waiter asleep
	before := sent.N()
	releaser := semaphore.New(client(t, s), name)
	if err := releaser.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	expectLetters(t, mail) // none: the head needs 3
	for i, w := range ws {
		select {
		case err := <-w.done:
			t.Fatalf("waiter %d (for %d) returned %v with 2 available behind a waiter for 3", i, w.n, err)
		default:
		}
	}
	if n := sent.N() - before; n != 0 {
		t.Errorf("the waiters behind the head sent %d commands on a release the head could not use, want 0", n)
	}
	if err := releaser.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	expectLetters(t, mail, "3", "next")
	if err := <-ws[0].done; err != nil {
		t.Fatal(err)
	}
	if err := releaser.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	expectLetters(t, mail, "1", "1")
	for _, w := range ws[1:] {
		if err := <-w.done; err != nil {
			t.Fatal(err)
		}
	}
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count at the end = %q, want \"0\"", v)
	}
}
