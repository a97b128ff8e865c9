package lockcore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockcore"
)

func TestWaiter_Reentry(t *testing.T) {
	for _, tc := range []struct {
		w    lockcore.Waiter
		want string
	}{
		{lockcore.Waiter{}, "0"},
		{lockcore.Waiter{Reentrant: true}, "1"},
		{lockcore.Waiter{Reentrant: true, Holding: true}, "2"},
	} {
		if got := tc.w.Reentry(); got != tc.want {
			t.Errorf("Reentry of %+v = %q, want %q", tc.w, got, tc.want)
		}
	}
}

// letter is a grant's letter with token 42 whose server time is d from
// now on a server clock ahead of ours by ahead.
func letter(now time.Time, ahead, d time.Duration) string {
	return fmt.Sprintf("42 %d", now.Add(ahead+d).UnixMicro())
}

func TestWaiter_Letter(t *testing.T) {
	now := time.Now()
	dated := func(ahead time.Duration) *lockcore.Waiter {
		w := &lockcore.Waiter{}
		w.ServerTime(now.Add(ahead).UnixMicro(), now)
		return w
	}
	for _, tc := range []struct {
		name string
		w    *lockcore.Waiter
		body string
		done bool
	}{
		// A letter dated later than we can have read it cannot be late.
		{"fresh", dated(0), letter(now, 0, time.Second), true},
		{"fresh, server ahead", dated(time.Minute), letter(now, time.Minute, time.Second), true},
		{"fresh, server behind", dated(-time.Minute), letter(now, -time.Minute, time.Second), true},
		{"older than half the grace", dated(0), letter(now, 0, -handoff.Grace), false},
		{"undated", &lockcore.Waiter{}, letter(now, 0, time.Second), false},
		{"synced", func() *lockcore.Waiter { w := dated(0); w.Synced = true; return w }(), letter(now, 0, time.Second), false},
		{"no time", dated(0), "42", false},
		{"bad token", dated(0), "x 1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, within := tc.w.Letter(tc.body, time.Now())
			if done != tc.done || within != 0 {
				t.Errorf("Letter(%q) = %v, %v; want %v, 0", tc.body, done, within, tc.done)
			}
		})
	}
	for _, body := range []string{"next", ""} {
		at := time.Now().Add(time.Hour)
		most := time.Until(at.Add(handoff.Grace + 10*time.Millisecond))
		done, within := dated(0).Letter(body, at)
		if done || within <= time.Hour || within > most {
			t.Errorf("Letter(%q) = %v, %v; want false and the grace past the letter", body, done, within)
		}
	}
}

// ServerTime keeps the least bound on how far the server's clock is ahead
// of ours, whichever attempt gave it.
func TestWaiter_ServerTime(t *testing.T) {
	now := time.Now()
	// The letter was written 1s from now by a server 100ms ahead: fresh.
	// Taking the 10s bound instead would date it 8.9s ago.
	body := letter(now, 100*time.Millisecond, time.Second)
	for _, order := range [][]time.Duration{{100 * time.Millisecond, 10 * time.Second}, {10 * time.Second, 100 * time.Millisecond}} {
		w := &lockcore.Waiter{}
		for _, ahead := range order {
			w.ServerTime(now.Add(ahead).UnixMicro(), now)
		}
		if done, _ := w.Letter(body, time.Now()); !done {
			t.Errorf("bounds %v: a fresh letter was taken for a late one", order)
		}
	}
}

// A release that grants the lock to a waiter tells it by letter: Lock
// returns with the letter's token and no further attempt, and the granted
// hold is then taken by a renewal, which here finds it gone.
func TestLock_grantedByLetter(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	f.attempt = func(n int, w *lockcore.Waiter) (lockcore.Attempt, error) {
		w.ServerTime(time.Now().UnixMicro(), w.Started)
		return refuse, nil
	}
	res := make(chan error, 1)
	go func() {
		ok, err := l.Lock(context.Background(), -1)
		if err == nil && !ok {
			err = errors.New("not acquired")
		}
		res <- err
	}()
	// The second attempt follows the subscription.
	eventually(t, "two attempts", func() bool { return len(f.ops("attempt")) >= 2 })
	a := f.ops("attempt")[0]
	// Dated a little ahead, so that a slow delivery cannot make it late.
	body := fmt.Sprintf("@%s 42 %d", a.key, time.Now().Add(300*time.Millisecond).UnixMicro())
	if err := l.Client.Publish(context.Background(), f.channel, body).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("Lock = %v", err)
		}
	case <-time.After(bound):
		t.Fatalf("Lock did not return within %v of its letter", bound)
	}
	if n := len(f.ops("attempt")); n != 2 {
		t.Errorf("%d attempts, want 2: the letter alone grants", n)
	}
	if h := l.Holds.Current(hold.Any); h == nil || h.Owner != a.id || l.Holds.Token() != 42 {
		t.Fatalf("hold %v, token %d; want %s's, 42", h, l.Holds.Token(), a.id)
	}
	// The lock's key is absent from miniredis: the take finds it gone.
	select {
	case <-l.Done():
	case <-time.After(bound):
		t.Fatalf("a granted hold whose key is gone was not lost within %v", bound)
	}
	if !errors.Is(l.Err(), latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", l.Err())
	}
}
