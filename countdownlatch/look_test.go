package countdownlatch_test

import (
	"context"
	"testing"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/pubsub"
)

// The zero message wakes every waiter of a client: they share one look at
// the count rather than take one each.
func TestLatch_oneLookPerClient(t *testing.T) {
	noLeaks(t)
	c, newClient := server(t)
	ctx := context.Background()
	name := latchName(t)
	l := countdownlatch.New(c, name)
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	other := newClient()
	gets := locktest.Commands{Only: "get"}
	other.AddHook(&gets)
	const n = 50
	done := make(chan error, n)
	for range n {
		go func() { done <- countdownlatch.New(other, name).Wait(ctx) }()
	}
	waiters(t, pubsub.Shared(other), n)
	before := gets.N()
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	for range n {
		released(t, done, fast, "count 0")
	}
	// One look, or two if the message came while an older look was out;
	// on a loaded machine a waiter's first look, after its subscription,
	// may still be out then too. Without sharing, there would be n.
	if got := gets.N() - before; got > 4 {
		t.Errorf("%d waiters of one client took %d looks at the count after the last CountDown, want at most 4", n, got)
	}
}
