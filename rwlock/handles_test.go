package rwlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
)

func TestRWMutex_cancel(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	writer := rwlock.New(client(t, s), name)
	rw := rwlock.New(client(t, s), name)
	must(t, writer.Lock(bg))
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if err := rw.RLock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RLock past its deadline = %v, want DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(bg)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := rw.Lock(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock = %v, want Canceled", err)
	}
	if ok, err := rw.TryRLock(bg, 100*time.Millisecond); ok || err != nil {
		t.Fatalf("TryRLock = %v, %v; want false, nil", ok, err)
	}
	if n := raw.HLen(bg, name).Val(); n != 2 {
		t.Fatalf("hash has %d fields after abandoned waits, want mode + writer", n)
	}
	must(t, writer.Unlock(bg))
}

func TestRWMutex_lockers(t *testing.T) {
	s := server(t)
	name := lockName(t)
	rw := rwlock.New(client(t, s), name)
	rl, wl := rw.RLocker(), rw.Locker()
	held := func(want bool) {
		t.Helper()
		if locked, err := rw.IsLocked(context.Background()); locked != want || err != nil {
			t.Fatalf("IsLocked = %v, %v; want %v", locked, err, want)
		}
	}
	rl.Lock()
	rl.Lock()
	held(true)
	rl.Unlock()
	rl.Unlock()
	held(false)
	wl.Lock()
	held(true)
	wl.Unlock()
	for _, l := range []interface{ Unlock() }{rl, wl} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "not held") {
					t.Errorf("Unlock of an unheld Locker: recovered %v, want a not-held panic", r)
				}
			}()
			l.Unlock()
		}()
	}
}

// ctxLocker is the method set a multilock takes.
type ctxLocker interface {
	Lock(context.Context) error
	TryLock(context.Context, time.Duration) (bool, error)
	Unlock(context.Context) error
}

var (
	_ ctxLocker = (*rwlock.ReadLock)(nil)
	_ ctxLocker = (*rwlock.WriteLock)(nil)
)

func TestRWMutex_handles(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), name)
	if r1, r2 := rw.ReadLock(), rw.ReadLock(); r1 != r2 || r1.Name() != name || rw.WriteLock().Name() != name {
		t.Fatal("ReadLock must return one handle named like the lock")
	}
	var r, w ctxLocker = rw.ReadLock(), rw.WriteLock()
	ctx := latchkey.WithOwner(bg)
	must(t, w.Lock(ctx), r.Lock(ctx))
	wdone, rdone := rw.WriteLock().Done(), rw.ReadLock().Done()
	must(t, w.Unlock(ctx))
	select {
	case <-wdone:
	default:
		t.Fatal("WriteLock().Done open after the write Unlock")
	}
	select {
	case <-rdone:
		t.Fatal("ReadLock().Done closed while reading")
	default:
	}
	must(t, r.Unlock(ctx))
	<-rw.ReadLock().Done()
	if rw.ReadLock().Err() != nil || rw.WriteLock().Err() != nil {
		t.Fatal("Err after unlocks must be nil")
	}
}

func TestNew_panics(t *testing.T) {
	s := server(t)
	c := s.Client(t)
	for name, f := range map[string]func(){
		"nil client":     func() { rwlock.New(nil, "x") },
		"zero lease":     func() { rwlock.New(c, "x", rwlock.WithLease(0)) },
		"1ns lease":      func() { rwlock.New(c, "x", rwlock.WithLease(time.Nanosecond)) },
		"tiny watchdog":  func() { rwlock.New(c, "x", rwlock.WithWatchdogTimeout(time.Millisecond)) },
		"negative lease": func() { rwlock.New(c, "x", rwlock.WithLease(-time.Second)) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.HasPrefix(r, "rwlock: New:") {
					t.Errorf("%s: recovered %q, want an rwlock: New panic", name, r)
				}
			}()
			f()
		}()
	}
}
