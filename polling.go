package latchkey

import (
	"github.com/latchkey/latchkey/internal/settings"
	"github.com/redis/go-redis/v9"
)

// SetPolling makes every primitive of this process that uses client wait
// by polling instead of through pub/sub (on = false turns pub/sub back
// on), for networks where SUBSCRIBE is refused: some proxies and managed
// endpoints. The client's calls then never subscribe, and nothing else
// changes: waiters still queue in arrival order, a release still hands a
// lock or permits to the head of the queue, and Redisson clients see the
// same keys and messages.
//
// A blocked call looks again on a schedule of its own instead of a message,
// within the bounds the data gives (the holder's TTL): the head of a queue,
// or a waiter that has none, after 10ms, backing off to 200ms, and the
// waiters behind the head every 500ms, each give or take a quarter, so
// that a waiter finds a grant made to it well inside its grace (1s). A
// handoff then costs up to the head's sleep rather than a message's trip,
// and a waiter a few looks a second. What only a letter says does not
// reach a polling waiter: a semaphore's Delete leaves its polling waiters
// waiting, as on a semaphore never set. The setting is kept per client, like
// the hooks, until Close. Set it before the client's first call: a Hub
// already subscribed keeps the subscriptions of the waiters already
// waiting.
func SetPolling(client redis.UniversalClient, on bool) {
	settings.SetPolling(client, on)
}
