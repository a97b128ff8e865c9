package lockopt_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/scripts"
)

// CheckLease takes MinLease to MaxLease, and MaxLease in whole
// milliseconds reads back as a Duration.
func TestCheckLease(t *testing.T) {
	for d, ok := range map[time.Duration]bool{
		-1:                   false,
		0:                    false,
		lockopt.MinLease - 1: false,
		lockopt.MinLease:     true,
		time.Hour:            true,
		lockopt.MaxLease:     true,
		lockopt.MaxLease + 1: false,
		math.MaxInt64:        false,
	} {
		err := lockopt.CheckLease(d)
		if (err == nil) != ok || err != nil && !errors.Is(err, lockerr.ErrInvalidLease) {
			t.Errorf("CheckLease(%v) = %v, want ok %v", d, err, ok)
		}
	}
	if back := scripts.Millis(scripts.Ms(lockopt.MaxLease)); back != lockopt.MaxLease {
		t.Errorf("MaxLease reads back from ms as %v", back)
	}
}
