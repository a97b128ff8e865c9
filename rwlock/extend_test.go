package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
)

// A side's Extend keeps its hold past the lease it was taken with, and a
// competitor out; it never takes a hold that is gone.
func TestRWMutex_extend(t *testing.T) {
	s := server(t)
	bg := context.Background()
	const lease = 300 * time.Millisecond
	type extendable interface {
		Lock(context.Context) error
		Unlock(context.Context) error
		Extend(context.Context, time.Duration) error
		Deadline() time.Time
		Err() error
	}
	for _, side := range []struct {
		what       string
		pick       func(*rwlock.RWMutex) extendable
		competitor func(*rwlock.RWMutex) (bool, error)
	}{
		{"write", func(rw *rwlock.RWMutex) extendable { return rw.WriteLock() },
			func(o *rwlock.RWMutex) (bool, error) { return o.TryRLock(bg, 0) }},
		{"read", func(rw *rwlock.RWMutex) extendable { return rw.ReadLock() },
			func(o *rwlock.RWMutex) (bool, error) { return o.TryLock(bg, 0) }},
	} {
		t.Run(side.what, func(t *testing.T) {
			name := lockName(t)
			l := side.pick(rwlock.New(client(t, s), name, rwlock.WithLease(lease)))
			if err := l.Extend(bg, time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
				t.Fatalf("Extend before Lock = %v, want ErrNotHeld", err)
			}
			if err := l.Lock(bg); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			if err := l.Extend(bg, 5*time.Second); err != nil {
				t.Fatalf("Extend = %v", err)
			}
			if d := l.Deadline().Sub(sent); d > 5*time.Second || d < 4*time.Second {
				t.Errorf("Deadline %v after Extend(5s)'s send", d)
			}
			time.Sleep(2 * lease)
			if err := l.Err(); err != nil {
				t.Fatalf("hold ended past its lease although extended: %v", err)
			}
			other := rwlock.New(client(t, s), name)
			if ok, err := side.competitor(other); ok || err != nil {
				t.Fatalf("competitor got in on the extended %s hold (err %v)", side.what, err)
			}
			if err := l.Unlock(bg); err != nil {
				t.Fatalf("Unlock = %v", err)
			}
			if !l.Deadline().IsZero() {
				t.Errorf("Deadline after Unlock = %v, want zero", l.Deadline())
			}

			if err := l.Lock(bg); err != nil {
				t.Fatal(err)
			}
			s.Client(t).Del(bg, name)
			if err := l.Extend(bg, time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
				t.Fatalf("Extend of a deleted lock = %v, want ErrNotHeld", err)
			}
			if n := s.Client(t).Exists(bg, name).Val(); n != 0 {
				t.Error("Extend of a deleted lock created it again")
			}
			if err := l.Err(); !errors.Is(err, latchkey.ErrLost) {
				t.Errorf("Err after Extend found the hold gone = %v, want ErrLost", err)
			}
		})
	}
}

func TestRWMutex_extendWatchdog(t *testing.T) {
	s := server(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), lockName(t))
	if err := rw.Lock(bg); err != nil {
		t.Fatal(err)
	}
	defer rw.Unlock(bg)
	if err := rw.WriteLock().Extend(bg, time.Hour); err == nil || errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Extend of a watchdog hold = %v, want an error saying the watchdog keeps it", err)
	}
	if d := time.Until(rw.WriteLock().Deadline()); d <= 0 || d > rwlock.DefaultWatchdogTimeout {
		t.Errorf("Deadline of a watchdog hold in %v", d)
	}
}
