package rt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// A call rides out errors that a retry may cure (see flight.Transient): a
// connection refused or reset, a timeout, a failover in progress. Such an
// error is retried, backing off from 25ms to 1s, while ctx and the wait
// budget allow; only a fault that lasts longer than the client's ride-out
// (RideOut, 30s unless set), or one that is not transient, ends the call
// with its error. A Redis Cluster failover takes the node timeout and an
// election: about 3s with a 2s cluster-node-timeout, 20s with the default
// 15s.

// An Outage tracks the outage a call is riding out, if any.
type Outage struct {
	rideOut  time.Duration
	deadline time.Time // of the wait budget; zero for none
	since    time.Time // when the first failed request of the outage was sent; zero for none
	sent     time.Time // when the latest request was sent
	tries    int       // errors in a row
	last     error     // the outage's latest error
	answered bool      // an attempt got an answer: Redis was there
}

// NewOutage returns the outage tracker of a call on client whose wait
// budget ends at deadline (zero for none).
func NewOutage(client redis.UniversalClient, deadline time.Time) *Outage {
	return &Outage{rideOut: RideOut(client), deadline: deadline}
}

// errSpent ends a wait whose budget ran out during an outage after an
// attempt had an answer: the wait ran out, as it would have without the
// fault, and the outage is no news to report.
var errSpent = errors.New("wait: budget spent")

// Final is the error a wait ends with after err: none when the budget ran
// out during an outage after an attempt had an answer.
func (f *Outage) Final(err error) error {
	if errors.Is(err, errSpent) {
		return nil
	}
	return err
}

// Answered notes how a request that was not to be retried ended: err
// (nil when it had an answer). The outage, if any, is over; it returns
// err as Cut does.
func (f *Outage) Answered(client redis.UniversalClient, err error) error {
	err = f.Cut(client, err)
	f.since, f.tries, f.last = time.Time{}, 0, nil
	f.answered = f.answered || err == nil
	return err
}

// Cut returns err, which ends a call, saying what may be wrong when no
// attempt of the call had an answer: an ended ctx's error, which it still
// matches, gets the outage's latest error beside it, as the only news of
// why the call waited in vain, and an error from Redis's side what it may
// mean (flight.Explain).
func (f *Outage) Cut(client redis.UniversalClient, err error) error {
	switch {
	case err == nil || errors.Is(err, errSpent):
		return err
	case f.last != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		last := f.last
		if !f.answered {
			last = flight.Explain(client, last)
		}
		return fmt.Errorf("%w while retrying after: %v", err, last)
	case !f.answered:
		return flight.Explain(client, err)
	}
	return err
}

// Began notes that a request was sent at t: an outage that it finds began
// then, since a request may take go-redis's retries to fail.
func (f *Outage) Began(t time.Time) { f.sent = t }

// Pause sleeps before the retry that follows err, a transient error, and
// returns nil; or it returns err, or ctx.Err(), when the outage has lasted
// the ride-out, the budget runs out first (errSpent if an attempt had an answer),
// or ctx ends.
func (f *Outage) Pause(ctx context.Context, err error) error {
	now := time.Now()
	if f.since.IsZero() {
		f.since = f.sent
	}
	f.last = err
	f.tries++
	d := min(25*time.Millisecond<<min(f.tries-1, 6), time.Second)
	if now.Add(d).After(f.since.Add(f.rideOut)) {
		return err
	}
	if !f.deadline.IsZero() && now.Add(d).After(f.deadline) {
		if f.answered {
			return errSpent
		}
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Retry calls f until it returns nil or an error that is not transient,
// riding out transient ones as a waiting call on client does, within ctx. It is for requests that are safe to send again because they carry a
// request record (see Write.Once): releases, count-downs, changes of
// permits. It returns f's last error, or an error matching ctx.Err().
func Retry(ctx context.Context, client redis.UniversalClient, f func(ctx context.Context) error) error {
	flight.MustContext(ctx)
	fs := NewOutage(client, time.Time{})
	for {
		fs.Began(time.Now())
		err := f(ctx)
		if err == nil || !flight.Transient(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fs.Pause(ctx, err); err != nil {
			return err
		}
	}
}
