package scripts_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// Run a script through the one runner (EVALSHA, EVAL on NOSCRIPT) and decode
// its {acquired, value} reply with Pair.
func ExampleScript_Run() {
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

	ok, token, err := scripts.Pair(acquire.Run(ctx, client, keys, lease, "client-a:1", "0"))
	fmt.Println(ok, token, err)
	ok, pttl, err := scripts.Pair(acquire.Run(ctx, client, keys, lease, "client-b:1", "0"))
	fmt.Println(ok, scripts.Millis(pttl) > 0, err)
	// Output:
	// true 1 <nil>
	// false true <nil>
}

// Ms rounds a duration up to whole milliseconds, so that a positive
// duration never becomes 0; Millis turns a reply back, negative counts
// meaning "no bound".
func ExampleMs() {
	fmt.Println(scripts.Ms(1500*time.Microsecond), scripts.Ms(time.Nanosecond))
	fmt.Println(scripts.Millis(250), scripts.Millis(-2))
	// Output:
	// 2 1
	// 250ms -1ns
}
