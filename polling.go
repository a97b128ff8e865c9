package latchkey

import (
	"github.com/latchkey/latchkey/internal/rt"
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
// within the bounds the data gives (the holder's TTL): a waiter r places
// behind the head of a queue after (r+1) times 10ms, doubling while its
// place stays the same, up to 200ms at the head (or without a queue) and
// 500ms behind it, each give or take a quarter, so that a waiter finds a
// grant made to it well inside its grace (1s). A handoff then costs a
// look rather than a message's trip: on the bench's hotlock, 9ms against
// 0.5ms, at a sixth of the acquisitions a second. What only a letter says does not
// reach a polling waiter: a semaphore's Delete leaves its polling waiters
// waiting, as on a semaphore never set. The setting is kept per client, like
// the hooks, until Close. Set it before the client's first call: a Hub
// already subscribed keeps the subscriptions of the waiters already
// waiting.
func SetPolling(client redis.UniversalClient, on bool) {
	rt.SetPolling(client, on)
}
