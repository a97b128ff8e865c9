package rt_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// Send a request through the one send path (EVALSHA, EVAL on NOSCRIPT)
// and decode its {acquired, value} reply with Pair.
func ExampleSender_Send() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	acquire := scripts.Get("lock_acquire")
	keys := []string{"lock", "redisson_lock_token:{lock}"}
	lease := scripts.Ms(30 * time.Second)

	send := rt.Of(client).Sender(nil, 0)
	ok, token, err := scripts.Pair(send.Send(ctx, scripts.Request{Script: acquire, Keys: keys, Args: []any{lease, "client-a:1", "0"}}).Cmd)
	fmt.Println(ok, token, err)
	ok, pttl, err := scripts.Pair(send.Send(ctx, scripts.Request{Script: acquire, Keys: keys, Args: []any{lease, "client-b:1", "0"}}).Cmd)
	fmt.Println(ok, scripts.Millis(pttl) > 0, err)
	// Output:
	// true 1 <nil>
	// false true <nil>
}
