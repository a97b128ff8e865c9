package wait_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/wait"
)

// An attempt that fails with an error a retry may cure (a dropped
// connection) is tried again, backing off, while the budget lasts; an error
// that is not transient ends the wait at once; an outage that outlasts the
// budget ends it with the outage's error, not as if the lock were busy.
func TestUntil_ridesOutTransientErrors(t *testing.T) {
	flaky := func(failures int, err error) (wait.Spec, *int) {
		n := 0
		return wait.Spec{Call: wait.Attempt(func(ctx context.Context) (bool, time.Duration, error) {
			n++
			if n <= failures {
				return false, 0, err
			}
			return true, 0, nil
		})}, &n
	}
	t.Run("transient", func(t *testing.T) {
		s, n := flaky(3, io.EOF)
		ok, err := wait.Until(context.Background(), time.Minute, s)
		if !ok || err != nil || *n != 4 {
			t.Fatalf("Until = %v, %v after %d attempts; want success on the 4th", ok, err, *n)
		}
	})
	t.Run("not transient", func(t *testing.T) {
		bad := errors.New("ERR something the server refuses")
		s, n := flaky(3, bad)
		ok, err := wait.Until(context.Background(), time.Minute, s)
		if ok || !errors.Is(err, bad) || *n != 1 {
			t.Fatalf("Until = %v, %v after %d attempts; want the error at once", ok, err, *n)
		}
	})
	t.Run("outlasts the budget", func(t *testing.T) {
		s, _ := flaky(1<<30, io.EOF)
		ok, err := wait.Until(context.Background(), 200*time.Millisecond, s)
		if ok || !errors.Is(err, io.EOF) {
			t.Fatalf("Until = %v, %v; want the outage's error when the budget ran out", ok, err)
		}
	})
	t.Run("outlasts the budget after an answer", func(t *testing.T) {
		n := 0
		s := wait.Spec{Call: wait.Attempt(func(ctx context.Context) (bool, time.Duration, error) {
			if n++; n == 1 {
				return false, 10 * time.Millisecond, nil // held by another
			}
			return false, 0, io.EOF
		})}
		ok, err := wait.Until(context.Background(), 200*time.Millisecond, s)
		if ok || err != nil || n < 3 {
			t.Fatalf("Until = %v, %v after %d attempts; want the wait to run out as usual", ok, err, n)
		}
	})
	t.Run("single attempt", func(t *testing.T) {
		s, n := flaky(1, io.EOF)
		ok, err := wait.Until(context.Background(), 0, s)
		if ok || !errors.Is(err, io.EOF) || *n != 1 {
			t.Fatalf("Until(wait 0) = %v, %v after %d attempts; want one attempt and its error", ok, err, *n)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		s, _ := flaky(1<<30, io.EOF)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ok, err := wait.Until(ctx, -1, s)
		if ok || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Until = %v, %v; want ctx's error", ok, err)
		}
	})
}
