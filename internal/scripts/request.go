package scripts

import (
	"sync/atomic"
	"time"
)

// A Request is one call of a script, as the script's builder (a type of
// this package named after it, such as MutexRelease) makes it from named
// fields, in the order of the script's header: the builders are the one
// place where a script's KEYS and ARGV are written by position, and a
// test holds each against its script's header. The send path (rt.Sender)
// fills in what only it knows, and sends it.
type Request struct {
	Script *Script
	Keys   []string
	// KeyArgs holds Keys boxed as go-redis arguments where the builder
	// had them boxed already (a handle's keys, a record's lane, boxed once
	// for all their requests); a nil entry, or a short slice, is boxed at
	// each send. Boxing a string allocates.
	KeyArgs []any
	Args    []any
	// Record is the key of the request's record (keys.Once), for a script
	// that takes one (see fragment/once.lua): a resend of the request then
	// finds its first answer instead of applying twice. "" when repeating
	// the request is harmless.
	Record string
	// Sole says that no other request shares the record, as an
	// acquisition's attempts share theirs: a release's, say. A sole
	// request's record is done with once the request is answered.
	Sole bool
	// Synced says that the request grants, renews or releases, and so
	// waits for the replicas of its master (see rt.Sender).
	Synced bool
	// inputs[i] is 1 + the position in Args of the value Input(i) stands
	// for, 0 if none: the send path writes them at each send.
	inputs [inputCount]int8
	// The labels of Keys and Args, while a test checks the builders
	// against the headers (see Checking).
	keyLabels, argLabels []string
}

// An Input is a value that the send path writes into a request's ARGV at
// each send, since only it knows it.
type Input int

// The inputs.
const (
	Now     Input = iota // the client's clock when the request is sent, ms since the epoch
	Pub                  // PUBLISH or SPUBLISH, as the sender's Hub settled it
	Grace                // how long a grant waits for its waiter to take it, ms (handoff.Grace)
	Counted              // "1" if Pub counts every receiver of a Hub's channel (handoff.Counted)
	inputCount
)

// Input returns the position in r.Args of input in, if r takes it.
func (r *Request) Input(in Input) (pos int, ok bool) {
	p := r.inputs[in]
	return int(p) - 1, p > 0
}

// checking is set while a test records the builders' labels.
var checking atomic.Bool

// Checking makes the builders record their labels (see Request.Labels),
// or stop. For tests.
func Checking(on bool) { checking.Store(on) }

// Labels returns the labels the builder gave r's KEYS and ARGV, in order,
// while Checking.
func (r *Request) Labels() (keys, args []string) { return r.keyLabels, r.argLabels }

// build makes a Request, one key and argument at a time, in the order of
// the script's header; a label names each, as the header does.
type build struct{ r Request }

// begin starts the request of s, with room for n keys and m arguments.
func begin(s *Script, n, m int) build {
	keys, keyArgs, args := Room(n, m)
	return build{Request{Script: s, Keys: keys, KeyArgs: keyArgs, Args: args}}
}

// Room returns empty KEYS, their boxes (see Request.KeyArgs) and ARGV with
// room for n keys and m arguments, in one allocation when they fit the
// sizes the scripts take.
func Room(n, m int) ([]string, []any, []any) {
	switch {
	case n <= 4 && m <= 4:
		b := new(struct {
			k  [4]string
			ka [4]any
			a  [4]any
		})
		return b.k[:0:n], b.ka[:0:n], b.a[:0:m]
	case n <= 8 && m <= 16:
		b := new(struct {
			k  [8]string
			ka [8]any
			a  [16]any
		})
		return b.k[:0:n], b.ka[:0:n], b.a[:0:m]
	}
	return make([]string, 0, n), make([]any, 0, n), make([]any, 0, m)
}

func (b *build) key(label, k string) { b.boxedKey(label, k, nil) }

// boxedKey writes k, which boxed is already as an argument (nil: boxed
// at each send).
func (b *build) boxedKey(label, k string, boxed any) {
	b.r.Keys = append(b.r.Keys, k)
	b.r.KeyArgs = append(b.r.KeyArgs, boxed)
	if checking.Load() {
		b.r.keyLabels = append(b.r.keyLabels, label)
	}
}

func (b *build) arg(label string, v any) {
	b.r.Args = append(b.r.Args, v)
	if checking.Load() {
		b.r.argLabels = append(b.r.argLabels, label)
	}
}

// input puts the value in stands for here.
func (b *build) input(label string, in Input) {
	b.r.inputs[in] = int8(len(b.r.Args) + 1)
	b.arg(label, nil)
}

// flag writes b as "1" or "0".
func (b *build) flag(label string, v bool) {
	if v {
		b.arg(label, "1")
	} else {
		b.arg(label, "0")
	}
}

// ms writes d in whole milliseconds, rounded up (see Ms).
func (b *build) ms(label string, d time.Duration) { b.arg(label, boxMs(d)) }

// A boxedMs is a duration and its milliseconds, boxed as an argument.
type boxedMs struct {
	d time.Duration
	v any
}

// boxes keeps the durations boxed last, by their milliseconds: a handle
// sends the same lease and lifetimes with every request, so each is boxed
// once. A duration that misses costs a box and its entry.
var boxes [16]atomic.Pointer[boxedMs]

// boxMs returns Ms(d), boxed.
func boxMs(d time.Duration) any {
	ms := Ms(d)
	slot := &boxes[uint64(ms)%uint64(len(boxes))]
	if c := slot.Load(); c != nil && c.d == d {
		return c.v
	}
	c := &boxedMs{d: d, v: ms}
	slot.Store(c)
	return c.v
}

// queued writes the inputs that every script of a queued primitive takes
// first (fragment/inputs.lua): now, the publish command, life (how long a
// queue entry, or the fair lock's heartbeat, lasts), the grace, and
// whether the publish command counts every receiver.
func (b *build) queued(life string, d time.Duration) {
	b.input("now", Now)
	b.input("PUBLISH or SPUBLISH", Pub)
	b.ms(life, d)
	b.input("grace", Grace)
	b.input("counted", Counted)
}

// recorded gives the request a record (see Request.Record).
func (b *build) recorded(key string, sole bool) { b.r.Record, b.r.Sole = key, sole }

// synced makes the request wait for replicas (see Request.Synced).
func (b *build) synced() { b.r.Synced = true }

func (b *build) done() Request { return b.r }

// Renewal is the request of a renewal script (lock_renew, lock_take,
// pes_renew, rw_renew_read), whose KEYS and ARGV are items of a batch
// (see package lease, which writes them): it waits for replicas.
func Renewal(s *Script, keys []string, args []any) Request {
	return Request{Script: s, Keys: keys, Args: args, Synced: true}
}
