package wait

import (
	"testing"
	"time"
)

// Backstop caps a sleep with no bound or a longer one; shorter bounds are
// kept as they are (the loop never polls on a fixed interval).
func TestNap(t *testing.T) {
	for _, tc := range []struct{ retry, want time.Duration }{
		{-1, Backstop},
		{-time.Hour, Backstop},
		{0, 0},
		{10 * time.Millisecond, 10 * time.Millisecond},
		{Backstop, Backstop},
		{Backstop + 1, Backstop},
		{time.Hour, Backstop},
	} {
		if got := nap(tc.retry); got != tc.want {
			t.Errorf("nap(%v) = %v, want %v", tc.retry, got, tc.want)
		}
	}
}
