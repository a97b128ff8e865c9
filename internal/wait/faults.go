package wait

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/rt"
)

// An attempt rides out transient errors as every call does (see
// rt.Outage); Spec.Transient may say which errors are.

func (s Spec) transient(err error) bool {
	if s.Transient != nil {
		return s.Transient(err)
	}
	return flight.Transient(err)
}

// attemptThrough runs s's attempt, retrying through transient errors.
func attemptThrough(ctx context.Context, s Spec, f *rt.Outage) (bool, time.Duration, error) {
	for {
		f.Began(time.Now())
		ok, retry, err := attempt(ctx, s)
		if err == nil || !s.transient(err) {
			return ok, retry, f.Answered(s.Client, err)
		}
		if err := f.Pause(ctx, err); err != nil {
			return false, 0, f.Cut(s.Client, err)
		}
	}
}
