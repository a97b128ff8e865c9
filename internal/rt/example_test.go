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

// Run a script through the one runner (EVALSHA, EVAL on NOSCRIPT) and decode
// its {acquired, value} reply with Pair.
func ExampleRun() {
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

	ok, token, err := scripts.Pair(rt.Run(ctx, client, acquire, keys, lease, "client-a:1", "0"))
	fmt.Println(ok, token, err)
	ok, pttl, err := scripts.Pair(rt.Run(ctx, client, acquire, keys, lease, "client-b:1", "0"))
	fmt.Println(ok, scripts.Millis(pttl) > 0, err)
	// Output:
	// true 1 <nil>
	// false true <nil>
}
