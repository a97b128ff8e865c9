package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// testHolderLiveness stages holders whose TTL and process record tell
// apart: a latchkey holder renewed by its watchdog, a Java client's hold
// whose TTL has run down 18s of its 30s lease, a latchkey owner whose
// process stopped writing its record 3 minutes ago, one with no record,
// and a hold with a TTL over the lease. inspect says each one's liveness,
// in its table and in -json, and -lease changes the lease it assumes.
//
// Each hold is staged again just before each look, and each renewal age
// checked against a window (see window) rather than a fixed bound: on a
// loaded machine a run of the binary takes seconds, and a TTL staged once
// at the start would run down, or out, before the last look.
func testHolderLiveness(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "liveness")
	const lease = 30 * time.Second // the default -lease
	lockedAt := time.Now()
	renewed := mutex.New(rdb, prefix+":renewed")
	if err := renewed.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer renewed.Unlock(context.Background())
	silent, unrecorded := latchkeyShaped(), latchkeyShaped()
	record := keys.ProcessRecord(silent[:36]) // written 3 minutes ago
	rdb.Set(ctx, record, `{"host":"web-7","pid":4121,"program":"orders"}`, keys.ProcessTTL-3*time.Minute)
	defer rdb.Del(context.Background(), record)

	type hold struct {
		name, owner string
		ttl         time.Duration // as staged; 0: the watchdog's mutex
		running     bool
		renewed     bool // whether renewed_ms is known
		table       *regexp.Regexp
	}
	holds := []hold{
		{name: "renewed", renewed: true, table: regexp.MustCompile(`renewed \S+ ago`)},
		{"java", java + ":1", 12 * time.Second, true, true,
			regexp.MustCompile(`not renewed for (\d+)s \(on a 30s lease\), expires in (\d+)s`)},
		{"silent", silent, 29 * time.Second, false, true, regexp.MustCompile(`process silent: record written 3m`)},
		{"unrecorded", unrecorded, 29 * time.Second, false, true, regexp.MustCompile(`no process record`)},
		{"fixed", java + ":2", 2 * time.Minute, false, false, regexp.MustCompile(`TTL over the 30s lease`)},
	}
	// stage sets h's hold (again) and returns when: its renewal age is
	// then lease - ttl, and grows with the time since.
	stage := func(h hold) time.Time {
		if h.ttl == 0 {
			return lockedAt // Lock set the lease at or after lockedAt; the watchdog only makes it younger
		}
		at := time.Now()
		name := prefix + ":" + h.name
		rdb.HSet(ctx, name, h.owner, 1)
		rdb.PExpire(ctx, name, h.ttl)
		t.Cleanup(func() { rdb.Del(context.Background(), name) })
		return at
	}
	for _, w := range holds {
		ttl := w.ttl
		if ttl == 0 {
			ttl = lease
		}
		at := stage(w)
		st := c.inspect(t, prefix+":"+w.name)
		if len(st.Holders) != 1 {
			t.Fatalf("%s: holders %+v", w.name, st.Holders)
		}
		h := st.Holders[0]
		lo, hi := window(lease-ttl, at)
		switch {
		case h.RunningDown != w.running,
			!w.renewed && h.RenewedMs != nil,
			w.renewed && (h.RenewedMs == nil || *h.RenewedMs < lo.Milliseconds() || *h.RenewedMs > hi.Milliseconds()):
			t.Errorf("%s: running_down %v, renewed_ms %v; want %v, within [%v, %v]", w.name, h.RunningDown, ptr(h.RenewedMs), w.running, lo, hi)
		}
		at = stage(w)
		table, _, _ := c.run(t, "inspect", prefix+":"+w.name)
		m := w.table.FindStringSubmatch(table)
		if m == nil {
			t.Errorf("%s: inspect's table lacks %q:\n%s", w.name, w.table, table)
			continue
		}
		if len(m) == 3 { // java: renewed 18s ago and more, and with what is left, the whole lease
			ago, left := atoi(m[1]), atoi(m[2])
			if lo, hi := window(lease-ttl, at); !inSeconds(ago, lo, hi) || ago+left < 30 || ago+left > 31 {
				t.Errorf("%s: not renewed for %ds, expires in %ds; want within [%v, %v], adding up to the 30s lease", w.name, ago, left, lo, hi)
			}
		}
	}
	st := c.inspect(t, prefix+":silent")
	if p := st.Holders[0].Process; p == nil || p.PID != 4121 || p.AgeMs < 179000 || p.Fresh() {
		t.Errorf("a process silent 3m: %+v, want pid 4121, age about 3m", p)
	}
	// The Java hold, on a lease of 15s, was renewed 3s ago: running down
	// only past the stall limit of that lease.
	at := stage(holds[1])
	st = c.inspect(t, prefix+":java", "-lease", "15s")
	lo, hi := window(3*time.Second, at)
	if h := st.Holders[0]; h.RenewedMs == nil || *h.RenewedMs < lo.Milliseconds() || *h.RenewedMs > hi.Milliseconds() ||
		h.RunningDown != (*h.RenewedMs > stallLimit(15*time.Second).Milliseconds()) {
		t.Errorf("-lease 15s: running_down %v, renewed_ms %v; want within [%v, %v], running down past %v",
			h.RunningDown, ptr(h.RenewedMs), lo, hi, stallLimit(15*time.Second))
	}
	for _, h := range holds {
		stage(h)
	}
	at = stage(holds[1]) // the Java hold's, staged last
	ls, _, _ := c.run(t, "ls", prefix+":*")
	for _, want := range []string{"process silent 3m", "no process record", "web-7 pid 4121"} {
		if !strings.Contains(ls, want) {
			t.Errorf("ls lacks %q:\n%s", want, ls)
		}
	}
	lo, hi = window(18*time.Second, at)
	if m := regexp.MustCompile(`not renewed for (\d+)s`).FindStringSubmatch(ls); m == nil || !inSeconds(atoi(m[1]), lo, hi) {
		t.Errorf("ls lacks the Java hold not renewed for [%v, %v]:\n%s", lo, hi, ls)
	}
}

// TestFrozenHolder freezes a process (SIGSTOP) that holds a mutex on a
// 9s watchdog lease: inspect shows the hold not renewed, before it
// expires, with the holder's host and pid. Before, the hold looked as
// healthy as any.
func TestFrozenHolder(t *testing.T) {
	srv := redistest.SharedServer(t)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	name := testName(t, "frozen")
	child := redistest.StartChild(t, "TestFrozenHolderChild", "HOLDER_ADDR="+srv.Addr(), "HOLDER_NAME="+name)
	child.WaitLine(t, "locked", 10*time.Second)
	eventually(t, "the holder's process record", func() bool { // written in the background
		st := c.inspect(t, name)
		return len(st.Holders) == 1 && st.Holders[0].Process != nil
	})
	if err := syscall.Kill(child.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(child.Pid(), syscall.SIGCONT)
	// Within the lease: the hold runs down at most 4.5s after the freeze,
	// and expires at most 9s after it.
	var st State
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st = c.inspect(t, name, "-lease", "9s"); len(st.Holders) != 1 || st.Holders[0].RunningDown {
			break
		}
	}
	if len(st.Holders) != 1 || !st.Holders[0].RunningDown {
		t.Fatalf("the frozen hold expired, or was never said to run down: %+v", st)
	}
	if p := st.Holders[0].Process; p == nil || p.PID != child.Pid() {
		t.Errorf("the frozen holder's process %+v, want pid %d", p, child.Pid())
	}
}

// TestFrozenHolderChild holds HOLDER_NAME on a 9s watchdog lease until
// it is killed.
func TestFrozenHolderChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("the child of TestFrozenHolder")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("HOLDER_ADDR")})
	m := mutex.New(rdb, os.Getenv("HOLDER_NAME"), mutex.WithWatchdogTimeout(9*time.Second))
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
}
