package permitsemaphore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t *testing.T) *redistest.Server { return redistest.SharedServer(t) }

// client returns a new client of s, as a separate process would have one;
// it and latchkey's resources for it are released when t ends.
func client(t *testing.T, s *redistest.Server) *redis.Client {
	c := s.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return c
}

// mini returns a miniredis server and a client of it, released when t ends.
func mini(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	mr, c := redistest.Miniredis(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return mr, c
}

// watched returns a handle on the semaphore name with a Hub of its own,
// closed when t ends, so that a test can count its waiters.
func watched(t *testing.T, s *redistest.Server, name string) (*permitsemaphore.Semaphore, *pubsub.Hub) {
	c := client(t, s)
	h := hub(t, c)
	return permitsemaphore.New(c, name, permitsemaphore.WithHub(h)), h
}

// hub returns a Hub of c closed when t ends, so a test can count waiters.
func hub(t *testing.T, c redis.UniversalClient) *pubsub.Hub {
	h := pubsub.New(c)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

var seq atomic.Int64

// semName returns a semaphore name unique to this run of t.
func semName(t *testing.T) string {
	return fmt.Sprintf("pes-test:%s:%d", t.Name(), seq.Add(1))
}

// waitWaiters waits until h has n waiters subscribed.
func waitWaiters(t *testing.T, h *pubsub.Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.Stats().Waiters != n {
		if time.Now().After(deadline) {
			t.Fatalf("hub has %d waiters, want %d", h.Stats().Waiters, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// loseReply is a go-redis hook that lets the next script run on the server
// and then reports its reply lost, as a broken connection would.
type loseReply struct{ armed atomic.Bool }

var errLostReply = errors.New("test: reply lost")

func (h *loseReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *loseReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *loseReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && err == nil && h.armed.Swap(false) {
			err = fmt.Errorf("%w: %w", errLostReply, io.ErrUnexpectedEOF)
			cmd.SetErr(err)
		}
		return err
	}
}
