package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/rwlock"
)

// A reader learns that its server forgot its read hold within a second
// of the server being back: a server without persistence is killed and
// started again empty.
func TestRWMutex_readLossToldOnRestart(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	rw := rwlock.New(client(t, s), lockName(t))
	if err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the watch is set up off RLock's path
	s.CrashRestart(t)
	back := time.Now()
	select {
	case <-rw.ReadLock().Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the reader was not told within 3s of the server's return")
	}
	t.Logf("the reader was told %v after the server was back", time.Since(back))
	if told := time.Since(back); told > time.Second {
		t.Errorf("the reader was told %v after the server was back, want within 1s", told)
	}
	if err := rw.ReadLock().Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
}
