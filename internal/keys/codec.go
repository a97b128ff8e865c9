package keys

import (
	"strconv"
	"strings"
)

// The formats of latchkey's queue entries and letters, which the scripts
// write and read (fragment/queue.lua, letter.lua, the semaphores'): the
// one Go codec of them, for the primitives, the Hub and the CLI.

// An Entry is a waiter's place in a latchkey queue: "<hub>/<key>" for a
// lock, where key is the letters' address (the owner id, followed by
// "/<call id>" for an owner that may re-enter: one owner may wait in two
// calls); "<hub>/<n>/<key>" for a semaphore's waiter for n permits, key
// naming the call, or for a permit semaphore's, the first permit id in
// hex. Hub is "" for a client that polls (latchkey.SetPolling), whom no
// letter reaches.
type Entry struct {
	Hub string
	N   int64 // permits waited for; 0 for a lock
	Key string
}

// String writes e as the scripts read it.
func (e Entry) String() string {
	if e.N == 0 {
		return e.Hub + "/" + e.Key
	}
	return e.Hub + "/" + strconv.FormatInt(e.N, 10) + "/" + e.Key
}

// Owner returns the owner id an entry's key names: the key less a call
// id, if any.
func (e Entry) Owner() string {
	o, _, _ := strings.Cut(e.Key, "/")
	return o
}

// ParseEntry reads an entry of a lock's queue (permits false) or of a
// semaphore's (permits true); ok is false for a string that is not one,
// such as Redisson's own entry in a mutex's queue.
func ParseEntry(s string, permits bool) (e Entry, ok bool) {
	hub, rest, ok := strings.Cut(s, "/")
	if !ok {
		return Entry{}, false
	}
	e.Hub, e.Key = hub, rest
	if !permits {
		return e, true
	}
	n, key, ok := strings.Cut(rest, "/")
	if !ok {
		return Entry{}, false
	}
	if e.N, _ = strconv.ParseInt(n, 10, 64); e.N < 1 {
		return Entry{}, false
	}
	e.Key = key
	return e, true
}

// HubChannel returns the channel of a Hub's letters under prefix (a
// layout's Hubs): "<prefix>:<hub>".
func HubChannel(prefix, hub string) string { return prefix + ":" + hub }

// ParseLetter splits a message "@<key> <body>" on a Hub's channel into its
// key, the address of the call it is for, and its body: a grant
// ("<what> <server clock in µs>"), "next", "turn", or "" (see
// internal/handoff).
func ParseLetter(payload string) (key, body string, ok bool) {
	rest, ok := strings.CutPrefix(payload, "@")
	if !ok {
		return "", "", false
	}
	key, body, _ = strings.Cut(rest, " ")
	return key, body, true
}

// ParseGrant reads a grant's body, "<what> <server clock in µs>" (a lock's
// what is its fencing token).
func ParseGrant(body string) (what, micros int64, ok bool) {
	w, m, ok := strings.Cut(body, " ")
	if !ok {
		return 0, 0, false
	}
	what, err1 := strconv.ParseInt(w, 10, 64)
	micros, err2 := strconv.ParseInt(m, 10, 64)
	return what, micros, err1 == nil && err2 == nil
}
