package rt

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A request record (see scripts/fragment/once.lua) answers a copy of its
// request that arrives after the request applied. It lives on a lane: a
// key of this client's in the record's hash slot,
// latchkey_once:{name}:<process>.<n>, that one record at a time writes
// over, with one SET where a key of its own would cost a DEL more. Each
// record put on a lane gets a stamp of its own, which its writes carry
// first: what the record before left on the lane is not this one's, and
// its requests neither replay it nor take it for theirs.
//
// A record leaves its lane, for the next record in the slot to take, once
// no copy of its requests can still be on its way: a sole request's (see
// Write.Sole) once answered, sooner than go-redis pauses before a resend
// (go-redis resends only after a failed try, and pauses at least
// MinRetryBackoff first; a MOVED or ASK reply, which it follows at once,
// means the script did not run); an acquisition's, whose tries share one
// record, once the call ended with each send answered that soon (see
// Finished). A record with a send that failed or was answered late keeps
// its lane, which is never taken again: the book forgets it when a copy
// can no longer write it, and the key expires with the record's TTL.
//
// A lane that no record took for a batch's delay is unlinked.
const (
	// dropBatch is how many idle lanes one UNLINK deletes at most.
	dropBatch = 64
	// dropDelay is how long a lane waits idle, at least, before it goes.
	dropDelay = 250 * time.Millisecond
	// dropTimeout bounds one batch's UNLINK.
	dropTimeout = 2 * time.Second
)

// numbered numbers the lanes and stamps of every client's records in this
// process, so that no two books write one lane.
var numbered atomic.Int64

// A lane is where a record lives: its key, and the stamp its writes carry
// (boxed, as an argument of its requests).
type lane struct {
	key   string
	arg   any // key, boxed once for the lane's every request
	stamp any
}

// A placed record is a record on its lane.
type placed struct {
	lane
	last     time.Time // when a request of it was last sent
	inFlight int       // its sends not answered yet
	kept     bool      // a send failed or was answered late: the lane stays
}

// An idleLane is a lane free to take, since tick.
type idleLane struct {
	key  string
	arg  any
	tick uint64
}

// A recordBook is what the runner keeps of one client's request records:
// how long they live, where they are, and the lanes free to take.
type recordBook struct {
	client redis.UniversalClient
	ttl    time.Duration
	// ttlArgs is the record's ARGV item for a sign of 1 and of -1 (see
	// withRecord), boxed once.
	ttlArgs [2]any
	single  time.Duration // a reply sooner than this had no resend; 0: never known

	mu     sync.Mutex
	placed map[string]placed     // record -> where it is
	idle   map[string][]idleLane // lane prefix -> lanes free to take, the newest last
	nIdle  int
	tick   uint64 // counts dropDelays while lanes are idle
	timer  *time.Timer
	sweep  time.Time // when placed is next cleared of records forgotten
	closed bool
}

func newRecordBook(c redis.UniversalClient) *recordBook {
	ttl := recordTTL(c)
	return &recordBook{client: c, ttl: ttl, ttlArgs: [2]any{scripts.Ms(ttl), -scripts.Ms(ttl)},
		single: resendPause(c), placed: map[string]placed{}, idle: map[string][]idleLane{}}
}

// RecordTTL returns how long a request record must live on client: longer
// than go-redis may go on resending the request, that is its retries times
// the time each try may take.
func RecordTTL(client redis.UniversalClient) time.Duration { return Of(client).records.ttl }

// place returns the lane of rec, putting it on one, an idle lane of its
// primitive's or a new one, if it has none: a request of it is being sent.
func (b *recordBook) place(rec string) lane {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.placed[rec]; ok {
		p.last = now
		p.inFlight++
		b.placed[rec] = p
		return p.lane
	}
	if now.After(b.sweep) {
		b.forget(now)
		b.sweep = now.Add(b.ttl / 2)
	}
	n := numbered.Add(1)
	var l lane
	prefix := keys.OnceLane(rec, "")
	if idle := b.idle[prefix]; len(idle) > 0 {
		l.key, l.arg = idle[len(idle)-1].key, idle[len(idle)-1].arg
		b.idle[prefix] = idle[:len(idle)-1]
		b.nIdle--
	} else {
		l.key = prefix + owner.Process() + "." + strconv.FormatInt(n, 10)
		l.arg = l.key
	}
	l.stamp = n
	p := placed{lane: l, last: now, inFlight: 1}
	b.placed[rec] = p
	return p.lane
}

// forget drops the records that no copy of a request can write any more:
// a copy applies within a TTL of its send, and its write lives a TTL.
func (b *recordBook) forget(now time.Time) {
	for rec, p := range b.placed {
		if now.Sub(p.last) > 2*b.ttl {
			delete(b.placed, rec)
		}
	}
}

// sent notes how a send recorded against rec ended: err, after took. A
// sole request all of whose sends were answered, each sooner than a resend
// could follow, is done with its record.
func (b *recordBook) sent(rec string, sole bool, err error, took time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.placed[rec]
	if !ok {
		return
	}
	p.inFlight--
	p.kept = p.kept || err != nil || took >= b.single
	if sole && !p.kept && p.inFlight == 0 {
		b.leave(rec, p)
		return
	}
	b.placed[rec] = p
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
	if p, ok := b.placed[rec]; ok && !p.kept && p.inFlight == 0 {
		b.leave(rec, p)
	}
}

// leave takes rec off its lane, which is idle then, unless the book
// closed (the key then expires with the record); b.mu is held.
func (b *recordBook) leave(rec string, p placed) {
	delete(b.placed, rec)
	if b.closed {
		return
	}
	prefix := keys.OnceLane(p.key, "")
	b.idle[prefix] = append(b.idle[prefix], idleLane{key: p.key, arg: p.arg, tick: b.tick})
	b.nIdle++
	switch {
	case b.nIdle >= dropBatch:
		go b.drop(b.takeIdle(b.tick + 1))
	case b.timer == nil:
		b.timer = time.AfterFunc(dropDelay, b.onTick)
	}
}

// onTick unlinks the lanes idle since before the last tick, so that a lane
// goes after one to two dropDelays idle.
func (b *recordBook) onTick() {
	b.mu.Lock()
	out := b.takeIdle(b.tick)
	b.tick++
	if b.nIdle > 0 && !b.closed {
		b.timer.Reset(dropDelay)
	} else {
		b.timer = nil
	}
	b.mu.Unlock()
	b.drop(out)
}

// takeIdle takes the lanes idle since before tick off the idle lists and
// returns their keys by hash slot; b.mu is held.
func (b *recordBook) takeIdle(tick uint64) map[int][]string {
	out := map[int][]string{}
	for prefix, lanes := range b.idle {
		n := 0
		for n < len(lanes) && lanes[n].tick < tick {
			slot := keys.Slot(lanes[n].key)
			out[slot] = append(out[slot], lanes[n].key)
			n++
		}
		b.nIdle -= n
		if n == len(lanes) {
			delete(b.idle, prefix)
		} else {
			b.idle[prefix] = slices.Delete(lanes, 0, n)
		}
	}
	return out
}

// drop deletes the keys bySlot holds. A failure leaves them to their TTL.
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

// close deletes the idle lanes.
func (b *recordBook) close() error {
	b.mu.Lock()
	b.closed = true
	out := b.takeIdle(^uint64(0))
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.mu.Unlock()
	b.drop(out)
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
