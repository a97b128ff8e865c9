package lockcore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// Grace is the lease of a hold that a release grants to the waiter at the
// head of the queue, until the waiter takes it: long enough for a live
// waiter to read its letter and extend the lease even when its process is
// starved of CPU or throttled (a loaded machine, a container over its CPU
// quota: at 100ms, about one hand-over in a thousand was lost so under two
// busy loops on 2 cores), short enough that a waiter that died or missed
// the letter holds up the lock only briefly. A waiter whose client is gone
// costs nothing: where the server counts a letter's receivers, a release
// skips it at once.
const Grace = time.Second

// TakeAfter is how long after its letter a granted hold is extended to the
// lock's own lease (a renewal, off Lock's path): a hold released sooner,
// as most contended holds are, never needs it. It leaves the renewal four
// fifths of the grace to arrive.
const TakeAfter = Grace / 5

// QueueTimeout is how long a waiter's queue entry lives unless it attempts
// again. Waiters attempt at least every wait.Backstop, refreshing it.
const QueueTimeout = 3 * wait.Backstop

// TakeLetter reads a letter to a waiter whose attempt takes what a
// release granted it (a semaphore's Acquire, a RedLock's Lock): it returns
// how soon to attempt again, and whether the waiter now heads the queue. A
// grant's letter, "<what> <server clock in µs>", asks for an attempt at
// once: the attempt takes the grant, and only its answer, that the grant
// was still there, ends the wait (the server takes a grant back after
// Grace, and hands it on). "next" says that the waiter ahead was granted:
// this one heads the queue, and tries once the grace is over, should that
// waiter never take it; so does an empty letter, the Hub's word that a
// letter for a call of this client that left went astray.
func TakeLetter(body string, at time.Time) (within time.Duration, head bool) {
	if !IsGrant(body) {
		return time.Until(at.Add(Grace + 10*time.Millisecond)), body == "next"
	}
	return 0, false
}

// IsGrant reports whether a letter's body is a grant's, rather than "next"
// or the Hub's empty word (see TakeLetter). A waiter must tell them apart by
// the body, not by how soon TakeLetter asks it to attempt: a "next" read
// more than the grace after it arrived, as on a starved machine, also asks
// for an attempt at once, and grants nothing.
func IsGrant(body string) bool { return body != "next" && body != "" }

// Reentry is the scripts' flag for w's attempts: "0" for a fresh id, "1"
// for an owner that may re-enter, "2" for one that holds the lock through
// this handle, whose attempt re-enters and never takes a grant.
func (w *Waiter) Reentry() string {
	switch {
	case w.Holding:
		return "2"
	case w.Reentrant:
		return "1"
	}
	return "0"
}

// ServerTime notes that an attempt sent at sent ran when the server's
// clock read micros. The server's clock is then at most micros - sent
// ahead of ours: of every attempt's, the least such bound dates a grant.
func (w *Waiter) ServerTime(micros int64, sent time.Time) {
	ahead := micros - sent.UnixMicro()
	if !w.dated || ahead < w.ahead {
		w.ahead, w.dated = ahead, true
	}
}

// Letter reads a letter to w, which the Hub received at.
// "<token> <server clock in µs>" is written by the release that granted w
// the lock, for the grace from then: on our clock, no sooner than that
// server time less the most the server's clock is ahead of ours (see
// ServerTime), which bounds the letter's delay whatever the clocks' offset.
// Letter reports done if w may return holding the lock on the letter
// alone. It may not when less than half the grace is left by that bound,
// or nothing dates the letter (then an attempt takes the hold if it is
// still there), or when w's master has replicas to wait for (the release's
// WAIT may not be over: an attempt, which finds the grant, waits for
// them). "next" says that the waiter ahead of w was granted the lock: w
// tries once the grace is over, should that waiter never take it; so does
// an empty letter, the Hub's word that a letter for a waiter of the same
// client that left went astray (see notify.Hub.SubscribeKey).
func (w *Waiter) Letter(body string, at time.Time) (done bool, within time.Duration) {
	if !IsGrant(body) {
		// "": a letter for a waiter of this client that left went astray;
		// it may have been a grant, which nobody will take.
		return false, time.Until(at.Add(Grace + 10*time.Millisecond))
	}
	tok, sent, _ := strings.Cut(body, " ")
	token, err1 := strconv.ParseInt(tok, 10, 64)
	micros, err2 := strconv.ParseInt(sent, 10, 64)
	if err1 != nil || err2 != nil || !w.dated || w.Synced {
		return false, 0
	}
	granted := time.UnixMicro(micros - w.ahead)
	if time.Since(granted) > Grace/2 {
		return false, 0
	}
	w.grantedAt, w.grantToken = granted, token
	return true, 0
}

// granted keeps a hold granted by a release (see Grace) at at, as Letter
// dates it: until it is taken, the hold lasts the grace from then; at
// TakeAfter a renewal extends it to the lock's lease, and from its answer
// on the lock's own keeper (the watchdog, or the fixed lease) keeps it. A
// hold re-entered before then was taken by the re-entry; one released
// before then needs nothing.
type granted struct {
	l     *Lock
	at    time.Time
	plain bool // the owner id is the hold's alone (see giveBack)
}

func (g granted) Keep(id string, _ time.Time, lost func(error)) hold.Keeping {
	k := &taking{l: g.l, id: id, plain: g.plain, lost: lost, until: g.at.Add(Grace - lease.Drift(Grace))}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expiry = time.AfterFunc(time.Until(k.until), func() {
		k.end(fmt.Errorf("%w: granted hold not taken within its grace of %v", lockerr.ErrLost, Grace))
	})
	k.timer = time.AfterFunc(time.Until(g.at.Add(TakeAfter)), k.take)
	return k
}

// taking is the Keeping of a granted hold.
type taking struct {
	l     *Lock
	id    string
	plain bool
	lost  func(error)
	back  sync.Once // see giveBack
	until time.Time // when the grant's lease may end

	mu     sync.Mutex
	expiry *time.Timer
	timer  *time.Timer  // the take, or its retry
	inner  hold.Keeping // the lock's own keeping, once taken
	over   bool         // stopped or lost
	lapsed bool         // declared lost here: the grant ran out untaken
	unsure bool         // a take went unanswered: it may have applied
}

// take extends the hold to the lock's lease, retrying errors until the
// grant's lease may have ended (the expiry then declares it lost). A take
// that may have applied on the server although the hold was declared lost
// here would leave the lock held by nobody for a whole lease: the hold is
// then given back.
func (k *taking) take() {
	sent := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), k.until)
	rep := lease.HashLock.Script.Exec(ctx, k.l.Client, scripts.Write{
		Keys: []string{k.l.Name},
		Args: []any{scripts.Ms(k.l.Cfg.TTL()), k.id},
		Sync: k.l.Cfg.Sync.Timeout(),
	})
	cancel()
	res, err := scripts.Ints(rep.Cmd)
	if err == nil {
		err = rep.SyncErr() // not taken where a failover could lose it
	}
	switch {
	case err != nil:
		k.mu.Lock()
		k.unsure = true
		lapsed := k.lapsed
		if !k.over && time.Now().Before(k.until) {
			k.timer = time.AfterFunc(10*time.Millisecond, k.take)
		}
		k.mu.Unlock()
		if lapsed {
			k.giveBack()
		}
	case len(res) == 1 && res[0] == 1:
		k.mu.Lock()
		lapsed := k.lapsed
		if !k.over && k.inner == nil {
			k.expiry.Stop()
			k.inner = k.l.keep.Keep(k.id, sent, k.lost)
		}
		k.mu.Unlock()
		if lapsed {
			k.giveBack() // taken on the server after it was declared lost here
		}
	default:
		k.end(fmt.Errorf("%w: granted hold gone before it was taken", lockerr.ErrLost))
	}
}

// end declares the hold lost, unless it was taken, stopped or lost.
func (k *taking) end(err error) {
	k.mu.Lock()
	if k.over || k.inner != nil {
		k.mu.Unlock()
		return
	}
	k.over, k.lapsed = true, true
	k.timer.Stop()
	unsure := k.unsure
	k.mu.Unlock()
	k.lost(err)
	if unsure {
		k.giveBack()
	}
}

// giveBack releases, on the server, a grant declared lost here that a take
// may have extended there, once. Only a plain hold's: its owner id is its
// own, whereas an owner that may re-enter may hold the lock anew by then,
// and its grant is left to run out with the lease, as a renewal that
// applies after its hold was declared lost is.
func (k *taking) giveBack() {
	if !k.plain {
		return
	}
	k.back.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait.AbandonTimeout)
		defer cancel()
		_, _ = k.l.releaseOnce(ctx, k.id, false)
	})
}

// Again hands the hold to the lock's keeper: a re-entry reset its lease.
func (k *taking) Again(started time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.over:
	case k.inner != nil:
		k.inner.Again(started)
	default:
		k.expiry.Stop()
		k.timer.Stop()
		k.inner = k.l.keep.Keep(k.id, started, k.lost)
	}
}

func (k *taking) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.over = true
	k.expiry.Stop()
	k.timer.Stop()
	if k.inner != nil {
		k.inner.Stop()
	}
}

// Counted is the flag that tells a script whether pub, the publish command
// of client, counts every receiver of a channel: on a single server, and
// with sharded pub/sub, it does; a cluster's PUBLISH counts only the
// subscribers of the node it ran on, and a Ring's servers are independent.
func Counted(client redis.UniversalClient, pub string) string {
	if _, ok := client.(*redis.Client); ok || pub == "SPUBLISH" {
		return "1"
	}
	return "0"
}
