package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// testHidden stages the waiters that have no queue entry: readers held
// back by a writer and a latch's waiters, latchkey's (each in a process of
// its own: a client of its own) and Redisson's (a bare subscription to
// Redisson's channel, as a Java client's), and checks that inspect, ls and
// unlock count them.
func testHidden(t *testing.T, c cli, srv *redistest.Server) {
	t.Run("readers", func(t *testing.T) { testHiddenReaders(t, c, srv) })
	t.Run("latch", func(t *testing.T) { testHiddenLatch(t, c, srv) })
}

// listening waits until inspect shows n subscribers on name's channel,
// and returns that state.
func (c cli) listening(t *testing.T, name string, n int64, flags ...string) State {
	t.Helper()
	var st State
	eventually(t, fmt.Sprintf("%d listening on %s", n, name), func() bool {
		st = c.inspect(t, name, flags...)
		return st.Subscribers != nil && *st.Subscribers == n
	})
	return st
}

// javaListens subscribes a connection of its own to channel, as a Java
// client's waiter does, until t ends.
func javaListens(t *testing.T, rdb redis.UniversalClient, channel string) {
	t.Helper()
	sub := rdb.Subscribe(t.Context(), channel)
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func testHiddenReaders(t *testing.T, c cli, srv *redistest.Server) {
	rdb := locktest.Client(t, srv)
	name := testName(t, "readers")
	w := rwlock.New(rdb, name)
	if err := w.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	var readers []*waiter
	for range 2 { // two processes, each with a reader held back
		r := rwlock.New(locktest.Client(t, srv), name)
		readers = append(readers, wait(r.RLock, r.RUnlock))
	}
	defer func() {
		for _, r := range readers {
			r.stop()
		}
	}()
	javaListens(t, rdb, namesOf(name).rw.Channel) // a Java reader held back
	// The writer's own client may linger on the channel for its Hub's
	// linger (a second) after it acquired: three, once it has left.
	st := c.listening(t, name, 3)
	if st.Kind != kindRWLock || st.Mode != "write" || len(st.Queue) != 0 || st.Channel != namesOf(name).rw.Channel {
		t.Errorf("write-held rwlock with readers held back: %+v", st)
	}
	table, _, _ := c.run(t, "inspect", name)
	if !strings.Contains(table, "LISTENING") || !strings.Contains(table, "3 clients on "+st.Channel) {
		t.Errorf("inspect's table does not show the 3 listening:\n%s", table)
	}
	ls, _, _ := c.run(t, "ls", name)
	if !strings.Contains(ls, "0 +3 listening") {
		t.Errorf("ls does not show the 3 listening:\n%s", ls)
	}
	out, errOut, code := c.run(t, "unlock", "-yes", name)
	if code != 0 || !strings.Contains(out, "3 clients listening") {
		t.Errorf("unlock: exit %d, %q%s; want the 3 listening counted", code, out, errOut)
	}
	for _, r := range readers {
		got(t, r, "a reader held back by the forced-unlocked writer", soon)
	}
}

func testHiddenLatch(t *testing.T, c cli, srv *redistest.Server) {
	rdb := locktest.Client(t, srv)
	name := testName(t, "latch")
	if _, err := countdownlatch.New(rdb, name).TrySetCount(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	var ws []*waiter
	for range 2 {
		l := countdownlatch.New(locktest.Client(t, srv), name)
		ws = append(ws, wait(l.Wait, func(context.Context) error { return nil }))
	}
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()
	javaListens(t, rdb, namesOf(name).latchChannel)
	// Detected a latch by its listeners, without -kind.
	st := c.listening(t, name, 3)
	if st.Kind != kindLatch || st.Count == nil || *st.Count != 1 || st.Channel != namesOf(name).latchChannel {
		t.Errorf("latch with 3 waiting processes: %+v", st)
	}
	// A reader that listens there itself (a watch) does not count itself.
	javaListens(t, rdb, namesOf(name).latchChannel)
	cn := &conn{client: rdb, server: srv.Addr()}
	if st, err := readAs(t.Context(), cn, name, "", selfListens{namesOf(name).latchChannel: true}); err != nil || ptr(st.Subscribers) != int64(3) {
		t.Errorf("readAs excluding its own subscription: %v, %v; want 3 listening", ptr(st.Subscribers), err)
	}
	out, errOut, code := c.run(t, "countdown", "-yes", name)
	if code != 0 {
		t.Fatalf("countdown: exit %d: %s%s", code, out, errOut)
	}
	for _, w := range ws {
		got(t, w, "a latch waiter", soon)
	}
}

// testClusterListeners counts a latch's waiters on a cluster, where the
// library subscribes with SSUBSCRIBE on Redis 7 (counted on the channel's
// master) and with SUBSCRIBE before (counted on every node): two
// processes' latchkey waiters, and the queued waiter of a mutex, alive.
func testClusterListeners(t *testing.T, c cli, cl *redistest.Cluster) {
	cc := locktest.ClusterClient(t, cl)
	// A hash tag of its own: the latch's channel, always braced whole, is
	// in another slot than its key, so on another master, likely.
	name := testName(t, "cllatch") + ":{x}"
	if _, err := countdownlatch.New(cc, name).TrySetCount(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	var ws []*waiter
	for range 2 {
		l := countdownlatch.New(locktest.ClusterClient(t, cl), name)
		ws = append(ws, wait(l.Wait, func(context.Context) error { return nil }))
	}
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()
	if st := c.listening(t, name, 2); st.Kind != kindLatch {
		t.Errorf("cluster latch with 2 waiting processes: %+v", st)
	}

	lock := testName(t, "cllive")
	m := mutex.New(cc, lock)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(context.Background()) }()
	h := mutex.New(locktest.ClusterClient(t, cl), lock)
	hw := wait(h.Lock, h.Unlock)
	defer hw.stop()
	queued(t, cc, namesOf(lock).lock.Queue, 1)
	if st := c.inspect(t, lock); len(st.Queue) != 1 || !st.Queue[0].Alive || st.Queue[0].Listening == nil || !*st.Queue[0].Listening {
		t.Errorf("cluster mutex's queued waiter: %+v, want alive and listening", st.Queue)
	}
}
