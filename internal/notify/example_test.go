package notify_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// A waiter subscribes, and is woken by a message published after Subscribe
// returned: Subscribe waits for the server's confirmation.
func ExampleHub_Subscribe() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	hub := notify.New(client)
	defer hub.Close()
	sub, err := hub.Subscribe(ctx, "redisson_lock__channel:{job}", notify.WakeOne)
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	cmd, _ := hub.PublishCommand(ctx)
	client.Do(ctx, cmd, "redisson_lock__channel:{job}", "0")
	<-sub.C()
	fmt.Println("woken; waiters:", hub.Stats().Waiters)
	// Output: woken; waiters: 1
}

// WakeCount wakes as many waiters as the payload says: a semaphore release
// of 2 permits wakes the 2 oldest of 3 waiters.
func ExampleWakeCount() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	hub := notify.New(client)
	defer hub.Close()

	var subs []*notify.Subscription
	for range 3 {
		sub, err := hub.Subscribe(ctx, "redisson_sc:{permits}", notify.WakeCount)
		if err != nil {
			panic(err)
		}
		defer sub.Close()
		subs = append(subs, sub)
	}
	client.Publish(ctx, "redisson_sc:{permits}", "2")
	<-subs[0].C()
	<-subs[1].C()
	fmt.Println("two oldest woken; third pending:", len(subs[2].C()))
	// Output: two oldest woken; third pending: 0
}

// exampleClient returns a client of an in-process miniredis server, and a
// function that stops both.
func exampleClient() (*redis.Client, func()) {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	return client, func() { _ = client.Close(); mr.Close() }
}
