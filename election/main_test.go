package election_test

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

// client returns a new client of s, as another process would have, closed
// with its latchkey resources when t ends.
func client(t testing.TB, s *redistest.Server) *redis.Client { return locktest.Client(t, s) }

var nameSeq atomic.Int64

// electionName returns an election name unique to this run of t.
func electionName(t testing.TB) string {
	return fmt.Sprintf("election-test:%s:%d:%d", t.Name(), time.Now().UnixNano(), nameSeq.Add(1))
}

// bound is how long a test waits for what must happen: it only catches
// what never does, on a loaded machine under -race.
const bound = 10 * time.Second
