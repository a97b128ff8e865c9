package main

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
)

// A heard message is a message read for what it means.
type heard struct {
	message
	kind string // forced, release, grant (a release that grants), letter (no release)
	// target is the owner a message is addressed to: a grant's grantee, or
	// the fair-lock waiter a release woke; "" on a shared channel.
	target string
	what   string // what it means, in words
}

// release reports whether h tells of a release: a release's message or a
// grant, rather than a force-unlock's own or a letter that grants nothing.
func release(h heard) bool { return h.kind == "release" || h.kind == "grant" }

// hearAll reads msgs, leaving out those on a channel that a prefix
// subscription matched but that is another name's (redisson_lock__channel:{a}:*
// matches the channels of a name {a}:x too).
func (w *watcher) hearAll(msgs []message) []heard {
	var out []heard
	for _, m := range msgs {
		if h, ok := w.hear(m); ok {
			out = append(out, h)
		}
	}
	return out
}

// hear reads m, a message on one of the name's channels; false if it is
// another name's.
func (w *watcher) hear(m message) (heard, bool) {
	n := w.n
	h := heard{message: m, kind: "release"}
	switch {
	case m.channel == n.lock.Forced || m.channel == n.rw.Forced:
		h.kind, h.what = "forced", "force-unlock"
	case strings.HasPrefix(m.channel, n.lock.Channel+":"):
		waiter := strings.TrimPrefix(m.channel, n.lock.Channel+":")
		if !uuidOwner(waiter) {
			return h, false
		}
		h.target, h.what = waiter, "fair-lock unlock, to waiter "+waiter+" (or the waiter ahead of it left)"
	case strings.HasPrefix(m.channel, keys.HubChannel(n.lock.Hubs, "")):
		if uuid.Validate(strings.TrimPrefix(m.channel, keys.HubChannel(n.lock.Hubs, ""))) != nil {
			return h, false
		}
		return letter(h)
	default:
		h.what = what(n, m)
	}
	return h, true
}

// letter reads a letter to a latchkey fair-lock waiter, "@<key> <body>",
// its key the owner id (and a call id): a grant, "<token> <server clock>",
// is the release that handed the lock over; the others ("next", "turn",
// "wake", the Hub's empty word) grant nothing.
func letter(h heard) (heard, bool) {
	key, body, ok := keys.ParseLetter(h.payload)
	if !ok {
		return h, false
	}
	h.target = keys.Entry{Key: key}.Owner() // a letter's key is its waiter's entry's
	token, _, grant := keys.ParseGrant(body)
	if !handoff.IsGrant(body) || !grant {
		h.kind, h.what = "letter", "letter "+strconv.Quote(body)+" to "+h.target
		return h, true
	}
	h.kind, h.what = "grant", "fair-lock handoff to "+h.target+" (token "+strconv.FormatInt(token, 10)+")"
	return h, true
}

// uuidOwner reports whether id is an owner id as Redisson and latchkey
// make them, <uuid>:<n>.
func uuidOwner(id string) bool {
	u, n, ok := strings.Cut(id, ":")
	if !ok || uuid.Validate(u) != nil {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 64)
	return err == nil
}
