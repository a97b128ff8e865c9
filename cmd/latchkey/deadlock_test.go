package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// TestDeadlocksTwoServices runs two processes that each take one lock
// and then wait for the other's: deadlocks finds them, by host and pid,
// and its command breaks the cycle: the waiter gets the lock.
func TestDeadlocksTwoServices(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	prefix := testName(t, "dl2")
	a, b := prefix+":a", prefix+":b"
	one := redistest.StartChild(t, "TestDeadlocksChild", "DL_ADDR="+srv.Addr(), "DL_FIRST="+a, "DL_THEN="+b)
	two := redistest.StartChild(t, "TestDeadlocksChild", "DL_ADDR="+srv.Addr(), "DL_FIRST="+b, "DL_THEN="+a)
	one.WaitLine(t, "holding", 10*time.Second)
	two.WaitLine(t, "holding", 10*time.Second)
	queued(t, rdb, namesOf(a).lock.Queue, 1)
	queued(t, rdb, namesOf(b).lock.Queue, 1)
	host, _ := os.Hostname()
	var out, errOut string
	var code int
	eventually(t, "both processes' records", func() bool { // written in the background
		out, errOut, code = c.run(t, "deadlocks", "-settle", "200ms", prefix+":*")
		return strings.Count(out, host+" pid ") >= 3
	})
	if code != exitDeadlock || !strings.Contains(out, "deadlock: 2 processes wait for each other") {
		t.Fatalf("deadlocks: exit %d, want %d:\n%s%s", code, exitDeadlock, out, errOut)
	}
	for _, pid := range []int{one.Pid(), two.Pid()} {
		if !strings.Contains(out, fmt.Sprintf("%s pid %d", host, pid)) {
			t.Errorf("deadlocks does not name pid %d:\n%s", pid, out)
		}
	}
	t.Logf("deadlocks:\n%s", out)
	cmd := strings.Fields(strings.SplitN(strings.SplitN(out, "to break it: latchkey ", 2)[1], "(", 2)[0])
	if len(cmd) != 2 || cmd[0] != "unlock" {
		t.Fatalf("the command to break it: %q", cmd)
	}
	if _, errOut, code := c.run(t, "unlock", "-yes", cmd[1]); code != 0 {
		t.Fatalf("unlock %s: exit %d: %s", cmd[1], code, errOut)
	}
	waiter := one // the one waiting for the lock forced
	if cmd[1] == a {
		waiter = two
	}
	waiter.WaitLine(t, "got both", 10*time.Second)
	if _, _, code := c.run(t, "deadlocks", "-settle", "0", prefix+":*"); code != 0 {
		t.Errorf("deadlocks after the break: exit %d, want 0", code)
	}
}

// TestDeadlocksChild takes DL_FIRST, then, once the other process holds
// DL_THEN, waits for it.
func TestDeadlocksChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("a child of TestDeadlocksTwoServices")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("DL_ADDR")})
	first, then := mutex.New(rdb, os.Getenv("DL_FIRST")), mutex.New(rdb, os.Getenv("DL_THEN"))
	if err := first.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("holding")
	for rdb.Exists(t.Context(), os.Getenv("DL_THEN")).Val() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := then.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("got both")
	time.Sleep(time.Minute)
}

// TestDeadlocks stages wait-for graphs in Redis as the clients lay them
// out, each waiter alive (its entry renewed, its channel listened on).
func TestDeadlocks(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	t.Run("three services", func(t *testing.T) { testDeadlocksThree(t, c, rdb) })
	t.Run("through a semaphore", func(t *testing.T) { testDeadlocksSemaphore(t, c, rdb) })
	t.Run("no cycle", func(t *testing.T) { testDeadlocksNone(t, c, rdb) })
}

// javaClient returns a Redisson client's owner id of thread n.
func javaClient(i, n int) string {
	return fmt.Sprintf("%08d-3d8f-4c1e-9a7b-2f6d8e1c0a93:%d", i, n)
}

// stageFair makes owner hold fair lock name and each of waiters wait
// for it, queued as Redisson's clients queue, listening on their own
// channels.
func stageFair(t *testing.T, rdb redis.UniversalClient, name, owner string, waiters ...string) {
	ctx := t.Context()
	l := namesOf(name).lock
	rdb.HSet(ctx, name, owner, 1)
	rdb.PExpire(ctx, name, time.Minute)
	for i, w := range waiters {
		rdb.RPush(ctx, l.FairQueue, w)
		rdb.ZAdd(ctx, l.FairDeadlines, redis.Z{Score: float64(time.Now().Add(time.Duration(5+i) * time.Minute).UnixMilli()), Member: w})
		javaListens(t, rdb, l.Channel+":"+w)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), name, l.FairQueue, l.FairDeadlines) })
}

// testDeadlocksThree: three Java services, each holding one fair lock
// and queued for the next one's: one cycle of three, broken by unlocking
// a lock whose queue the cycle heads.
func testDeadlocksThree(t *testing.T, c cli, rdb redis.UniversalClient) {
	prefix := testName(t, "dl3")
	for i := range 3 {
		stageFair(t, rdb, fmt.Sprintf("%s:%d", prefix, i), javaClient(i, 1), javaClient((i+2)%3, 2))
	}
	out, _, code := c.run(t, "deadlocks", "-json", "-settle", "0", prefix+":*")
	if code != exitDeadlock {
		t.Fatalf("deadlocks: exit %d, want %d:\n%s", code, exitDeadlock, out)
	}
	var d Deadlock
	if err := json.Unmarshal([]byte(out), &d); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("deadlocks -json: %v:\n%s", err, out)
	}
	if d.Possible || len(d.Processes) != 3 || d.Break == nil || !strings.HasPrefix(d.Break.Name, prefix) || d.Processes[0].Client != "redisson" {
		t.Errorf("the cycle of three: %+v", d)
	}
	for _, p := range d.Processes {
		if p.Holds == nil || p.Position != 1 {
			t.Errorf("process %+v: want what it holds, and first in the queue it waits in", p)
		}
	}
}

// testDeadlocksSemaphore: a process holds a lock and waits for a
// semaphore none of whose permits is free; another waits for that lock.
// If the second holds the semaphore's permit, which nothing records, the
// two wait for each other: a possible deadlock, broken by the lock.
func testDeadlocksSemaphore(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "dlsem")
	lock, sem := prefix+":lock", prefix+":sem"
	p1, p2 := latchkeyShaped(), latchkeyShaped()
	hub1, hub2 := "7d3c2a10-5b4e-4f6a-9c8d-1e2f3a4b5c6d", "8e4d3b21-6c5f-4a7b-8d9e-2f3a4b5c6d7e"
	rdb.HSet(ctx, lock, p1, 1)
	rdb.PExpire(ctx, lock, time.Minute)
	l, s := namesOf(lock).lock, namesOf(sem).sem
	e2 := hub2 + "/" + p2[:36] + ":9"
	rdb.RPush(ctx, l.Queue, e2)
	rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: e2})
	javaListens(t, rdb, l.Hubs+":"+hub2)
	rdb.Set(ctx, sem, 0, time.Minute)
	e1 := hub1 + "/1/" + p1[:36] + ":7"
	rdb.RPush(ctx, s.Queue, e1)
	rdb.ZAdd(ctx, s.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: e1})
	javaListens(t, rdb, s.Hubs+":"+hub1)
	rec := keys.ProcessRecord(p1[:36])
	rdb.Set(ctx, rec, `{"host":"web-7","pid":4121,"program":"orders"}`, time.Minute)
	defer rdb.Del(context.Background(), lock, l.Queue, l.Deadlines, sem, s.Queue, s.Deadlines, rec)
	out, errOut, code := c.run(t, "deadlocks", "-settle", "0", prefix+":*")
	if code != exitDeadlock || !strings.Contains(out, "possible deadlock: 2 processes, through a semaphore") ||
		!strings.Contains(out, "may hold a permit of "+sem) || !strings.Contains(out, "to break it: latchkey unlock "+shellQuote(lock)) ||
		!strings.Contains(out, "forces out web-7 pid 4121 (orders), told within about a second; process "+p2[:36]+" (no record) gets the lock") {
		t.Errorf("deadlocks through a semaphore: exit %d:\n%s%s", code, out, errOut)
	}
	t.Logf("deadlocks:\n%s", out)
}

// testDeadlocksNone: a chain of waits, one process waiting for the next,
// the last waiting for nothing: no cycle, exit 0.
func testDeadlocksNone(t *testing.T, c cli, rdb redis.UniversalClient) {
	prefix := testName(t, "dlnone")
	stageFair(t, rdb, prefix+":0", javaClient(0, 1), javaClient(1, 2))
	stageFair(t, rdb, prefix+":1", javaClient(1, 1), javaClient(2, 2))
	out, errOut, code := c.run(t, "deadlocks", "-settle", "0", prefix+":*")
	if code != 0 || !strings.Contains(out, "no deadlock") {
		t.Errorf("deadlocks of a chain: exit %d:\n%s%s", code, out, errOut)
	}
}
