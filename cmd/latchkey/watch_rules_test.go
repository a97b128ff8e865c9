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
		{n.lock.Channel + ":" + java + ":1", "0", "fair-lock unlock, to waiter " + java + ":1"},
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
	// A 30s lease renewed at 20s left, looked at every second, first seen
	// at each point of its renewal period.
	for first := int64(30000); first > 19000; first -= 1000 {
		var r renewals
		ttl := first
		for range 120 {
			if _, _, warn, _ := r.observe(held(ttl)); warn {
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
		notRenewed, expires, warn, check := r.observe(held(ttl))
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
	if _, _, warn, _ := r.observe(held(30000)); warn {
		t.Error("reported at a renewal")
	}
	if _, _, warn, _ := r.observe(held(10000)); !warn {
		t.Error("not reported again after a renewal and 20s without one")
	}
	// Nothing held, or no TTL: nothing to say.
	if _, _, warn, check := r.observe(&State{Name: "w", Kind: kindMutex}); warn || check != 0 {
		t.Error("a free lock reported or looked at")
	}
}
