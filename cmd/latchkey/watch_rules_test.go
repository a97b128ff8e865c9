package main

import (
	"testing"
	"time"
)

// TestWatchWhat checks what each message of Redisson's (and latchkey's)
// is said to mean.
func TestWatchWhat(t *testing.T) {
	n := namesOf("w")
	for _, c := range []struct{ channel, payload, want string }{
		{n.lock.Channel, "0", "unlock"},
		{n.rw.Channel, "0", "read-unlock"},
		{n.rw.Channel, "1", "write-unlock (or a waiting writer gave up)"},
		{n.sem.Channel, "3", "semaphore release (3)"},
		{n.sem.Channel, "2147483647", "semaphore deleted (latchkey's Delete wakes every waiter)"},
		{n.latchChannel, "0", "latch zero"},
		{n.latchChannel, "1", "latch count set, or latch deleted"},
		{n.lock.Channel, "hello", "message"},
		{n.sem.Channel, "x", "message"},
	} {
		if got := what(n, message{channel: c.channel, payload: c.payload}); got != c.want {
			t.Errorf("what(%s, %q) = %q, want %q", c.channel, c.payload, got, c.want)
		}
	}
}

// TestRenewals feeds renewals the TTLs of looks: a hold renewed every
// third of its lease, whenever first seen, is never reported; one left to
// run down is reported once, until a renewal.
func TestRenewals(t *testing.T) {
	held := func(ttl int64) *State {
		return &State{Name: "w", Kind: kindMutex, TTLms: ttl, Holders: []Holder{{Owner: java + ":1", Count: 1}}}
	}
	const lease = 30 * time.Second
	// A 30s lease renewed at 20s left, looked at every second, first seen
	// at each point of its renewal period.
	for first := int64(30000); first > 19000; first -= 1000 {
		var r renewals
		ttl := first
		for range 120 {
			if _, _, _, warn, _ := r.observe(held(ttl), lease); warn {
				t.Fatalf("first seen at %dms: renewed hold reported at %dms", first, ttl)
			}
			if ttl -= 1000; ttl < 20000 {
				ttl = 30000
			}
		}
	}
	// Left to run down from 30s: reported once, past 10s + 5s unrenewed.
	var r renewals
	warned := 0
	for ttl := int64(30000); ttl > 0; ttl -= 500 {
		notRenewed, expires, _, warn, check := r.observe(held(ttl), lease)
		if warn {
			warned++
			if notRenewed <= 15*time.Second || notRenewed+expires != 30*time.Second {
				t.Errorf("reported at %dms: not renewed %v, expires in %v", ttl, notRenewed, expires)
			}
		} else if warned == 0 && check <= 0 {
			t.Fatalf("at %dms: no look asked for before the finding", ttl)
		}
	}
	if warned != 1 {
		t.Errorf("reported %d times, want once", warned)
	}
	// A renewal after the finding lets a later one be reported again.
	if _, _, _, warn, _ := r.observe(held(30000), lease); warn {
		t.Error("reported at a renewal")
	}
	if _, _, _, warn, _ := r.observe(held(10000), lease); !warn {
		t.Error("not reported again after a renewal and 20s without one")
	}
	// Nothing held, or no TTL: nothing to say.
	if _, _, _, warn, check := r.observe(&State{Name: "w", Kind: kindMutex}, lease); warn || check != 0 {
		t.Error("a free lock reported or looked at")
	}
	// First seen at 20s left of its 30s lease, 10s after its last renewal,
	// and left to run down: what is reported is the time since that
	// renewal, not since it was first seen (which under-reported it by
	// 10s: 82.7s shown for 97s, on a longer lease, in the drill).
	r = renewals{}
	for ttl := int64(20000); ttl > 0; ttl -= 500 {
		if notRenewed, _, _, warn, _ := r.observe(held(ttl), lease); warn {
			if want := time.Duration(30000-ttl) * time.Millisecond; notRenewed != want {
				t.Errorf("first seen at 20s: reported %v not renewed at %dms, want %v", notRenewed, ttl, want)
			}
			break
		}
	}
	// A TTL over the lease: the largest seen stands for it, a lower bound.
	r = renewals{}
	r.observe(held(105700), lease)
	notRenewed, _, l, warn, _ := r.observe(held(23000), lease)
	if !warn || notRenewed != 82700*time.Millisecond || l != 105700*time.Millisecond {
		t.Errorf("a 2m lease first seen at 105.7s: %v not renewed (warned %v) against %v; want 82.7s against 105.7s, at least", notRenewed, warn, l)
	}
}

// TestWatchHear checks how watch reads the messages of a fair lock's
// waiters' channels: Redisson's per waiter, latchkey's Hubs' letters, and
// another name's channel that a pattern matched too.
func TestWatchHear(t *testing.T) {
	w := &watcher{n: namesOf("f")}
	hub := "7d3c2a10-5b4e-4f6a-9c8d-1e2f3a4b5c6d"
	owner := latchkeyShaped()
	for _, c := range []struct {
		channel, payload string
		ok               bool
		kind, target     string
	}{
		{w.n.lock.Channel + ":" + java + ":1", "0", true, "release", java + ":1"},
		{w.n.lock.Channel + ":x:" + java + ":1", "0", false, "", ""}, // f:x's own channel? no: {f}:x's
		{w.n.lock.Hubs + ":" + hub, "@" + owner + " 17 1700000000000000", true, "grant", owner},
		{w.n.lock.Hubs + ":" + hub, "@" + owner + "/call-1 17 1700000000000000", true, "grant", owner},
		{w.n.lock.Hubs + ":" + hub, "@" + owner + " next", true, "letter", owner},
		{w.n.lock.Hubs + ":" + hub, "@" + owner + " ", true, "letter", owner},
		{w.n.lock.Hubs + ":x:" + hub, "@" + owner + " 17 1", false, "", ""},
		{w.n.lock.Forced, owner, true, "forced", ""},
		{w.n.lock.Channel, "0", true, "release", ""},
	} {
		h, ok := w.hear(message{channel: c.channel, payload: c.payload})
		if ok != c.ok || ok && (h.kind != c.kind || h.target != c.target) {
			t.Errorf("hear(%s, %q) = %+v, %v; want %s to %q, %v", c.channel, c.payload, h, ok, c.kind, c.target, c.ok)
		}
	}
}
