package handoff

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// A Clock dates grants for one waiter: it bounds how far the server's clock
// is ahead of ours from the attempts' send times and the server times their
// answers carry, so that a letter's delay is bounded whatever the clocks'
// offset. Its zero value knows nothing.
type Clock struct {
	ahead int64 // the most the server's clock is ahead of ours, µs
	dated bool  // ahead is known
}

// ServerTime notes that an attempt sent at sent ran when the server's
// clock read micros. The server's clock is then at most micros - sent
// ahead of ours: of every attempt's, the least such bound dates a grant.
func (c *Clock) ServerTime(micros int64, sent time.Time) {
	ahead := micros - sent.UnixMicro()
	if !c.dated || ahead < c.ahead {
		c.ahead, c.dated = ahead, true
	}
}

// Grant reads a lock grant's letter body, "<token> <server clock in µs>":
// the grant was made, on our clock, no sooner than at, that server time
// less the most the server's clock is ahead of ours. ok reports whether the
// waiter may hold on the letter alone: the letter is dated, and more than
// half the grace is left from at.
func (c *Clock) Grant(body string) (token int64, at time.Time, ok bool) {
	token, micros, ok := keys.ParseGrant(body)
	if !ok || !c.dated {
		return 0, time.Time{}, false
	}
	at = time.UnixMicro(micros - c.ahead)
	if time.Since(at) > Grace/2 {
		return 0, time.Time{}, false
	}
	return token, at, true
}
