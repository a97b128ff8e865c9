package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/redis/go-redis/v9"
)

// A latch stuck at 1, its counting process dead, with latchkey waiters
// and a Redisson waiter: countdown releases them all.
func testCountdown(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "latch")
	l := countdownlatch.New(rdb, name)
	if _, err := l.TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	sub := rdb.Subscribe(ctx, namesOf(name).latchChannel) // a Java client's await
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	var ws []*waiter
	for range 2 {
		ws = append(ws, wait(countdownlatch.New(rdb, name).Wait, func(context.Context) error { return nil }))
	}
	select {
	case <-ws[0].got:
		t.Fatal("a waiter passed a latch at 1")
	case <-time.After(100 * time.Millisecond):
	}
	// Its listeners tell it a latch: no -kind needed.
	eventually(t, "the latch detected by its listeners", func() bool {
		st := c.inspect(t, name)
		return st.Kind == kindLatch && st.Subscribers != nil && *st.Subscribers == 2
	})
	out, errOut, code := c.run(t, "countdown", "-yes", name)
	if code != 0 || !strings.Contains(out, "counted down from 1 to 0") || strings.Contains(out, "times") {
		t.Fatalf("countdown: exit %d: %s%s", code, out, errOut)
	}
	for _, w := range ws {
		got(t, w, "a latchkey waiter", time.Second)
		w.stop()
	}
	select {
	case msg := <-sub.Channel():
		if msg.Payload != "0" {
			t.Errorf("Redisson's waiters were told %q, want 0", msg.Payload)
		}
	case <-time.After(soon):
		t.Error("nothing was published on the latch's channel")
	}
	if _, _, code := c.run(t, "countdown", "-yes", "-kind", "countdownlatch", name); code != exitNothing {
		t.Errorf("countdown of a latch gone: exit %d, want %d", code, exitNothing)
	}
}
