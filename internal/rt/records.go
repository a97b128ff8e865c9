package rt

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A request record (see scripts/fragment/once.lua) answers a copy of its
// request that arrives after the request applied. Once a sole request
// (see Write.Sole) is answered and no other copy of it can be on its way,
// the record has done its work, and the runner deletes it instead of
// leaving it to its TTL, which must outlast every resend go-redis might
// make. A request has had no other copy when each of its sends was
// answered, the last one sooner than go-redis pauses before a resend:
// go-redis resends only after a failed try, and pauses at least
// MinRetryBackoff first (a MOVED or ASK reply, which it follows at once,
// means the script did not run). A send that failed leaves its record to
// its TTL. An acquisition's tries share one record, which is done with
// when the call has ended, if each of its sends was answered that soon
// (see Finished).
//
// A record done with goes out with the client's next request to its hash
// slot that takes a record (see scripts/fragment/once.lua), which costs
// that script one DEL; those no request takes along within a batch's
// delay are unlinked then.
const (
	// alongMax is how many done-with records one request takes along.
	alongMax = 16
	// dropBatch is how many answered records one UNLINK deletes at most.
	dropBatch = 64
	// dropDelay is the longest an answered record waits for its batch.
	dropDelay = 250 * time.Millisecond
	// dropTimeout bounds one batch's UNLINK.
	dropTimeout = 2 * time.Second
)

// A recordBook is what the runner keeps of one client's request records:
// how long they live, the records answered and waiting for their batch,
// and the records of sends that failed, which stay.
type recordBook struct {
	client redis.UniversalClient
	ttl    time.Duration
	// ttlArgs is the record's ARGV item for a sign of 1 and of -1 (see
	// withRecord), boxed once.
	ttlArgs [2]any
	single  time.Duration // a reply sooner than this had no resend; 0: never known

	mu      sync.Mutex
	pending map[int][]string // records done with, by hash slot
	count   int              // records in pending
	timer   *time.Timer
	failed  map[string]time.Time // record -> when it may go from here
	sweep   time.Time            // when failed is next cleared of those
	closed  bool
}

func newRecordBook(c redis.UniversalClient) *recordBook {
	ttl := recordTTL(c)
	return &recordBook{client: c, ttl: ttl, ttlArgs: [2]any{scripts.Ms(ttl), -scripts.Ms(ttl)},
		single: resendPause(c), pending: map[int][]string{}, failed: map[string]time.Time{}}
}

// RecordTTL returns how long a request record must live on client: longer
// than go-redis may go on resending the request, that is its retries times
// the time each try may take.
func RecordTTL(client redis.UniversalClient) time.Duration { return Of(client).records.ttl }

// sent notes how a send of the sole request recorded against rec ended:
// err, after took. A record all of whose sends were answered, the last
// sooner than a resend could follow, is done with.
func (b *recordBook) sent(rec string, err error, took time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		now := time.Now()
		if now.After(b.sweep) {
			b.forget(now)
			b.sweep = now.Add(b.ttl / 4)
		}
		b.failed[rec] = now.Add(b.ttl)
		return
	}
	if took < b.single {
		b.doneLocked(rec)
	}
}

// Finished tells the runner of client that its caller sends no more
// requests against the record rec, each of whose sends was single (see
// Reply.Single): an acquisition that ended. The record is then done with,
// as a sole request's is once answered. "" is no record.
func Finished(client redis.UniversalClient, rec string) {
	if rec == "" {
		return
	}
	b := Of(client).records
	b.mu.Lock()
	defer b.mu.Unlock()
	b.doneLocked(rec)
}

// doneLocked queues rec for deletion, unless a send of it failed or the
// book closed; b.mu is held.
func (b *recordBook) doneLocked(rec string) {
	if b.closed {
		return
	}
	if _, ok := b.failed[rec]; ok {
		return
	}
	slot := keys.Slot(rec)
	b.pending[slot] = append(b.pending[slot], rec)
	b.count++
	switch {
	case b.count >= dropBatch:
		go b.drop(b.take())
	case b.timer == nil:
		b.timer = time.AfterFunc(dropDelay, func() { b.drop(b.takeLocked()) })
	}
}

// sending notes that a request recorded against rec is being sent: a
// record done with whose request is sent again is wanted after all, and
// stays to its TTL.
func (b *recordBook) sending(rec string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count == 0 {
		return
	}
	slot := keys.Slot(rec)
	recs := b.pending[slot]
	if i := slices.Index(recs, rec); i >= 0 {
		b.pending[slot] = slices.Delete(recs, i, i+1)
		b.count--
		b.failed[rec] = time.Now().Add(b.ttl)
	}
}

// forget drops the failed records whose TTL is over.
func (b *recordBook) forget(now time.Time) {
	for rec, end := range b.failed {
		if now.After(end) {
			delete(b.failed, rec)
		}
	}
}

// along returns records done with in the hash slot of ks, for a request
// with those keys to delete (see once.lua).
func (b *recordBook) along(ks []string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count == 0 || len(ks) == 0 {
		return nil
	}
	slot := keys.Slot(ks[0])
	recs := b.pending[slot]
	if len(recs) <= alongMax {
		delete(b.pending, slot)
	} else {
		recs, b.pending[slot] = recs[:alongMax], recs[alongMax:]
	}
	b.count -= len(recs)
	return recs
}

// take returns every record done with, by hash slot, and starts afresh;
// b.mu is held.
func (b *recordBook) take() map[int][]string {
	out := b.pending
	b.pending = map[int][]string{}
	b.count = 0
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	return out
}

func (b *recordBook) takeLocked() map[int][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.take()
}

// drop deletes the records bySlot holds. A failure leaves them to their
// TTL.
func (b *recordBook) drop(bySlot map[int][]string) {
	if len(bySlot) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	if c, ok := b.client.(*redis.Client); ok { // one server: one UNLINK
		var all []string
		for _, recs := range bySlot {
			all = append(all, recs...)
		}
		_ = c.Unlink(ctx, all...).Err()
		return
	}
	// Elsewhere the keys of one UNLINK must share a hash slot.
	pipe := b.client.Pipeline()
	for _, recs := range bySlot {
		pipe.Unlink(ctx, recs...)
	}
	_, _ = pipe.Exec(ctx)
}

// close deletes the answered records still waiting for their batch.
func (b *recordBook) close() error {
	b.mu.Lock()
	b.closed = true
	recs := b.take()
	b.mu.Unlock()
	b.drop(recs)
	return nil
}

// resendPause returns the least time go-redis pauses before it resends a
// request on client: a reply that came sooner answered the only copy
// sent. It is 0, never, when go-redis may resend without a pause.
func resendPause(client redis.UniversalClient) time.Duration {
	never := time.Duration(1<<63 - 1)
	switch c := client.(type) {
	case *redis.Client:
		o := c.Options()
		if o.MaxRetries <= 0 {
			return never
		}
		return max(min(o.MinRetryBackoff, o.MaxRetryBackoff), 0)
	case *redis.ClusterClient:
		o := c.Options()
		if o.MaxRetries <= 0 && o.MaxRedirects <= 0 {
			return never
		}
		return max(min(o.MinRetryBackoff, o.MaxRetryBackoff), 0)
	}
	return 0
}

func recordTTL(client redis.UniversalClient) time.Duration {
	tries, perTry := 4, 7*time.Second // go-redis's defaults: 3 retries, 3s reads and writes
	switch c := client.(type) {
	case *redis.Client:
		o := c.Options()
		tries, perTry = o.MaxRetries+1, try(o.ReadTimeout, o.WriteTimeout, o.MaxRetryBackoff)
	case *redis.ClusterClient:
		o := c.Options()
		tries = (o.MaxRetries + 1) * (o.MaxRedirects + 1)
		perTry = try(o.ReadTimeout, o.WriteTimeout, o.MaxRetryBackoff)
	}
	return min(max(time.Duration(max(tries, 1))*perTry, 10*time.Second), 2*time.Minute)
}

// try returns how long one try of a request may take with these timeouts
// (0: go-redis's default of 3s; negative: none, counted as a minute).
func try(read, write, backoff time.Duration) time.Duration {
	t := func(d time.Duration) time.Duration {
		switch {
		case d == 0:
			return 3 * time.Second
		case d < 0:
			return time.Minute
		}
		return d
	}
	return t(read) + t(write) + max(backoff, 0)
}
