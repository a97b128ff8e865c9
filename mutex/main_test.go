package mutex_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t testing.TB) *redistest.Server { return redistest.SharedServer(t) }

func client(t testing.TB, s *redistest.Server) *redis.Client { return locktest.Client(t, s) }

var nameSeq atomic.Int64

// lockName returns a lock name unique to this run of t.
func lockName(t testing.TB) string {
	return fmt.Sprintf("mutex-test:%s:%d:%d", t.Name(), time.Now().UnixNano(), nameSeq.Add(1))
}
