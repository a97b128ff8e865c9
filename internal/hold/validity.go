package hold

import (
	"time"

	"github.com/latchkey/latchkey/internal/lease"
)

// A Validity is what this process knows of how long one hold stays valid,
// from the requests that set its lease (see lease.ValidUntil). Requests
// that change the TTL may overlap, and the server may apply them in either
// order: the TTL then ends no sooner than the earliest of theirs. So a
// request sent before the latest answer came, or one that went unanswered
// (it may have applied at any time since), can only move the validity
// earlier. Its owner's mutex guards it.
type Validity struct {
	until    time.Time
	answered time.Time // when the latest answer came
}

// NewValidity returns the validity of a hold acquired, with lease d, by a
// request sent at sent: its answer came after that.
func NewValidity(sent time.Time, d time.Duration) Validity {
	return Validity{until: lease.ValidUntil(sent, d), answered: sent}
}

// Set notes a request sent at sent that set the lease to d, answered if
// sure, and returns the validity's new end.
func (v *Validity) Set(sent time.Time, d time.Duration, sure bool) time.Time {
	until := lease.ValidUntil(sent, d)
	if (!sure || sent.Before(v.answered)) && v.until.Before(until) {
		until = v.until
	}
	if sure {
		v.answered = time.Now()
	}
	v.until = until
	return until
}

// Until returns the validity's end.
func (v *Validity) Until() time.Time { return v.until }
