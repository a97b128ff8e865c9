package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Locker is a worker's handle on a lock, built on the worker's own Conn
// as a separate process would hold it. Lock blocks until the lock is held or
// ctx ends; Unlock releases what Lock took. For a semaphore Lock and Unlock
// are Acquire and Release of one permit.
type Locker interface {
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
}

// An RWLocker is a Locker that can also be held shared.
type RWLocker interface {
	Locker
	RLock(ctx context.Context) error
	RUnlock(ctx context.Context) error
}

// A Conn is one worker's connections: its client on the main server (a
// cluster client in cluster scenarios) and, for scenarios over several
// independent masters, one client per master; for an impl with a Peer, its
// connection to that peer.
type Conn struct {
	Client redis.UniversalClient
	Nodes  []*redis.Client
	Peer   any // what Impl.Peer's Dial returned

	closers []func()
}

// OnClose registers f to run when c is closed, after the impl's Close and
// before c's connections are closed: a handle's subscription or session.
// Handles are made one at a time, before the clock starts; OnClose is not
// safe for concurrent use.
func (c *Conn) OnClose(f func()) { c.closers = append(c.closers, f) }

// A Kind names the primitive an Impl provides; a scenario runs the impls of
// the kinds it lists.
type Kind string

// The kinds of primitive the suite knows about.
const (
	KindMutex     Kind = "mutex"
	KindFairLock  Kind = "fairlock"
	KindRWLock    Kind = "rwlock"
	KindSemaphore Kind = "semaphore"
	KindLatch     Kind = "latch"
	KindWatchdog  Kind = "watchdog" // a mutex kept alive while held
	KindRedlock   Kind = "redlock"
	KindElection  Kind = "election" // a leader election: an Elector
)

// An Impl is one implementation of a primitive, configured as its users
// would configure it. Adding one is a file whose init calls register.
type Impl struct {
	Name  string
	Kind  Kind
	Rank  int    // order in tables and charts, lowest first
	Color string // its colour in every chart of every report; no two impls share one
	About string // its configuration and why, for the report
	// Peer, if set, is the server other than Redis that the impl runs on
	// (etcd, PostgreSQL); the suite starts it, or skips the impl with a note
	// when it is not installed. Each worker's Conn then carries Peer.Dial's
	// connection.
	Peer *Peer
	// New returns a worker's handle on the primitive called name: a Locker,
	// RWLocker or whatever the scenarios of its kind expect. It must do no
	// I/O: it runs before the clock starts.
	New func(c *Conn, name string) any
	// Open, if set, is used instead of New for handles that need I/O to
	// exist (an etcd session). It runs before the clock starts.
	Open func(ctx context.Context, c *Conn, name string) (any, error)
	// Prepare, if set, creates the primitive before a run (a semaphore's
	// permits): capacity is the scenario's.
	Prepare func(ctx context.Context, c *Conn, name string, capacity int) error
	// Close, if set, releases what the impl keeps for c in the background;
	// it runs after the workers stopped, before c's clients are closed.
	Close func(c *Conn)
	// Optional impls run only in the scenarios that name them in Also: a
	// yardstick one scenario needs, kept out of the others.
	Optional bool
}

// onRedis reports whether im runs on the suite's Redis.
func (im *Impl) onRedis() bool { return im.Peer == nil }

var impls []*Impl

func register(im *Impl) {
	for _, o := range impls {
		if o.Name == im.Name {
			panic("bench: impl registered twice: " + im.Name)
		}
	}
	if im.Color == "" {
		panic("bench: impl without a colour: " + im.Name)
	}
	impls = append(impls, im)
	slices.SortStableFunc(impls, func(a, b *Impl) int { return a.Rank - b.Rank })
}

// selectImpls returns the impls named in the comma-separated list, or all of
// them for "all" or "".
func selectImpls(list string) ([]*Impl, error) {
	if list == "" || list == "all" {
		return impls, nil
	}
	return pick("impl", impls, list, func(im *Impl) string { return im.Name })
}

// pick returns the items of all named in the comma-separated list, in the
// list's order, without repeats.
func pick[T comparable](what string, all []T, list string, name func(T) string) ([]T, error) {
	var out []T
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(all, func(t T) bool { return name(t) == n })
		if i < 0 {
			var have []string
			for _, t := range all {
				have = append(have, name(t))
			}
			return nil, fmt.Errorf("unknown %s %q (have %s)", what, n, strings.Join(have, ","))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// errGaveUp marks a Lock that returned because the implementation stopped
// waiting on its own (tries exhausted, its own wait timeout), as opposed to
// the benchmark ending the run.
var errGaveUp = errors.New("gave up waiting")

func gaveUp(err error) error { return fmt.Errorf("%w: %w", errGaveUp, err) }

// handle returns im's handle on name as a T, or an error if im does not
// provide one.
func handle[T any](ctx context.Context, im *Impl, c *Conn, name string) (T, error) {
	var (
		h   any
		err error
	)
	if im.Open != nil {
		h, err = im.Open(ctx, c, name)
	} else {
		h = im.New(c, name)
	}
	t, ok := h.(T)
	switch {
	case err != nil:
		return t, fmt.Errorf("%s: %w", im.Name, err)
	case !ok:
		return t, fmt.Errorf("%s does not provide a %T", im.Name, (*T)(nil))
	}
	return t, nil
}
