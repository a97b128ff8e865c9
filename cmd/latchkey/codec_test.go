package main

import (
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/keys"
)

// The CLI reads queue entries and Hub channels as the keys codec writes
// them: a lock's entry with and without a call id, a polling client's,
// a semaphore's, a permit semaphore's (and the permit ids of the format
// before), and Redisson's place in line, which is no latchkey entry.
func TestEntriesAsTheCodecWrites(t *testing.T) {
	const hubs = "latchkey_lock__channel:{orders}"
	hex := strings.Repeat("0123456789abcdef", 2)
	for _, c := range []struct {
		e, owner, channel string
	}{
		{keys.Entry{Hub: "h1", Key: "u:1"}.String(), "u:1", keys.HubChannel(hubs, "h1")},
		{keys.Entry{Hub: "h1", Key: "u:1/call-7"}.String(), "u:1", keys.HubChannel(hubs, "h1")},
		{keys.Entry{Key: "u:1"}.String(), "u:1", ""}, // polls: no Hub, no letters
		{redissonEntry, redissonEntry, ""},
	} {
		if got := entryOwner(c.e); got != c.owner {
			t.Errorf("entryOwner(%q) = %q, want %q", c.e, got, c.owner)
		}
		if got := entryChannel(hubs, c.e); got != c.channel {
			t.Errorf("entryChannel(%q) = %q, want %q", c.e, got, c.channel)
		}
	}
	for _, c := range []struct {
		kind, e, owner string
		permits        int64
	}{
		{kindSemaphore, keys.Entry{Hub: "h1", N: 3, Key: "u:1:7"}.String(), "u:1:7", 3},
		{kindPermits, keys.Entry{Hub: "h1", N: 2, Key: hex}.String(), hex, 2},
		{kindPermits, "h1/" + hex + hex, hex, 2}, // before: the permit ids themselves
		{kindSemaphore, redissonTurn, redissonTurn, 1},
	} {
		if w := semWaiter(c.kind, c.e, 0, 0); w.Owner != c.owner || w.Permits != c.permits {
			t.Errorf("semWaiter(%s, %q): owner %q, %d permits; want %q, %d", c.kind, c.e, w.Owner, w.Permits, c.owner, c.permits)
		}
	}
}

// watch reads a Hub's letters as letter.lua writes them ("@<key> <body>"):
// a grant names its token, the other words grant nothing, and a message
// that is no letter (Redisson's) is not read as one.
func TestLetters(t *testing.T) {
	for _, c := range []struct {
		payload, kind, target, what string
		ok                          bool
	}{
		{"@u:1/call-7 42 1700000000000000", "grant", "u:1", "(token 42)", true},
		{"@u:1 next", "letter", "u:1", `letter "next"`, true},
		{"@u:1 ", "letter", "u:1", `letter ""`, true},
		{"@u:1 wake", "letter", "u:1", `letter "wake"`, true},
		{"0", "", "", "", false},
	} {
		h, ok := letter(heard{message: message{payload: c.payload}})
		if ok != c.ok || ok && (h.kind != c.kind || h.target != c.target || !strings.Contains(h.what, c.what)) {
			t.Errorf("letter(%q) = %s %q %q, %v; want %s %q %q, %v", c.payload, h.kind, h.target, h.what, ok, c.kind, c.target, c.what, c.ok)
		}
	}
}
