package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// Delete clears what dead waiters left in the queue of a free lock.
func TestMutex_deleteLeftovers(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	queue, deadlines := "latchkey_lock_queue:{"+name+"}", "latchkey_lock_timeout:{"+name+"}"
	for _, ghost := range []string{"gone-hub/ghost-1", "gone-hub/ghost-2"} {
		raw.RPush(ctx, queue, ghost)
		raw.ZAdd(ctx, deadlines, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: ghost})
	}
	m := mutex.New(client(t, s), name)
	if ok, err := m.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete of a free lock with a dead queue = %v, %v; want true", ok, err)
	}
	if n := raw.Exists(ctx, queue, deadlines).Val(); n != 0 {
		t.Fatalf("%d queue keys left after Delete", n)
	}
}
