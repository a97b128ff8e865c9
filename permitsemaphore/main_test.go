package permitsemaphore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t *testing.T) *redistest.Server { return redistest.SharedServer(t) }

func client(t *testing.T, s *redistest.Server) *redis.Client { return locktest.Client(t, s) }

func mini(t *testing.T) (*miniredis.Miniredis, *redis.Client) { return locktest.Mini(t) }

func hub(t *testing.T, c redis.UniversalClient) *pubsub.Hub { return locktest.Hub(t, c) }

func semName(t *testing.T) string { return locktest.Name(t, "permitsemaphore-test") }

// waitWaiters waits until n Acquire calls wait through h: each listens on
// its Hub's channel for letters and counts Redisson's releases.
func waitWaiters(t *testing.T, h *pubsub.Hub, n int) { t.Helper(); locktest.WaitWaiters(t, h, 2*n) }

// watched returns a handle on the semaphore name with a Hub of its own,
// closed when t ends, so that a test can count its waiters.
func watched(t *testing.T, s *redistest.Server, name string) (*permitsemaphore.Semaphore, *pubsub.Hub) {
	c := client(t, s)
	h := hub(t, c)
	return permitsemaphore.New(c, name, permitsemaphore.WithHub(h)), h
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
