package mutex_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t testing.TB) *redistest.Server { return redistest.SharedServer(t) }

// client returns a new client of s, as a separate process would have one;
// it and latchkey's resources for it are released when t ends.
func client(t testing.TB, s *redistest.Server) *redis.Client {
	c := s.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return c
}

var nameSeq atomic.Int64

// lockName returns a lock name unique to this run of t.
func lockName(t testing.TB) string {
	return fmt.Sprintf("mutex-test:%s:%d:%d", t.Name(), time.Now().UnixNano(), nameSeq.Add(1))
}
