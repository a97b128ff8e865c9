package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// latchkeyShaped returns a fresh owner id of latchkey's shape (a version 8
// UUID) of a process other than this one.
func latchkeyShaped() string {
	u := uuid.New()
	u[6] = u[6]&0x0f | 0x80
	return u.String() + ":1"
}

// The holder of a lock taken through the library, in this process, is
// found by its record: this host, this pid, this program. A Redisson
// owner, a process without a record and one whose record is garbled (not
// JSON, the wrong JSON, not a string) yield none, and no error.
func TestProcessRecords(t *testing.T) {
	s := redistest.SharedServer(t)
	ctx := t.Context()
	lib := s.Client(t)
	defer latchkey.Close(lib)
	name := testName(t, "process")
	m := mutex.New(lib, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(context.Background())
	admin := s.Client(t)
	holders, err := admin.HKeys(ctx, name).Result()
	if err != nil || len(holders) != 1 {
		t.Fatalf("HKEYS %s = %v, %v; want the holder", name, holders, err)
	}
	holder := holders[0]
	self := strings.SplitN(holder, ":", 2)[0]
	eventually(t, "the library's process record", func() bool {
		return admin.Exists(ctx, keys.ProcessRecord(self)).Val() == 1
	})

	missing, notJSON, wrongJSON, hash := latchkeyShaped(), latchkeyShaped(), latchkeyShaped(), latchkeyShaped()
	set := func(id, v string) {
		k := keys.ProcessRecord(id[:36])
		admin.Set(ctx, k, v, time.Minute)
		t.Cleanup(func() { admin.Del(context.Background(), k) })
	}
	set(notJSON, "web-7 pid 4121")
	set(wrongJSON, `{"host":"web-7"}`)
	hk := keys.ProcessRecord(hash[:36])
	admin.HSet(ctx, hk, "pid", 1)
	t.Cleanup(func() { admin.Del(context.Background(), hk) })
	redisson := uuid.NewString() + ":1"

	c := &conn{client: admin, server: s.Addr()}
	got, err := processes(ctx, c, []string{holder, redisson, missing, notJSON, wrongJSON, hash, holder, "worker-7", ""})
	if err != nil {
		t.Fatalf("processes = %v", err)
	}
	host, _ := os.Hostname()
	p, ok := got[self]
	if len(got) != 1 || !ok {
		t.Fatalf("processes = %v; want only this process's, %s", got, self)
	}
	if p.Host != host || p.PID != os.Getpid() || p.Program != filepath.Base(os.Args[0]) || p.Started.IsZero() {
		t.Errorf("record %+v; want host %q, pid %d, program %q", p, host, os.Getpid(), filepath.Base(os.Args[0]))
	}
	if want := host + " pid " + strconv.Itoa(os.Getpid()) + " (" + p.Program + ")"; p.String() != want {
		t.Errorf("String() = %q, want %q", p.String(), want)
	}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"pid":`) || !strings.Contains(string(b), `"started":`) {
		t.Errorf("JSON %s, %v", b, err)
	}

	if got, err := processes(ctx, c, []string{redisson, "worker-7"}); err != nil || len(got) != 0 {
		t.Errorf("processes of Redisson's owners = %v, %v; want none, no round trip", got, err)
	}
	down := &conn{client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), server: "127.0.0.1:1"}
	defer down.client.Close()
	if _, err := processes(ctx, down, []string{holder}); err == nil {
		t.Error("processes through a server that cannot be reached: no error")
	}
}

// The short form leaves out what a record lacks.
func TestProcessString(t *testing.T) {
	for _, tc := range []struct {
		p    Process
		want string
	}{
		{Process{Process: keys.Process{Host: "web-7", PID: 4121, Program: "orders-svc"}}, "web-7 pid 4121 (orders-svc)"},
		{Process{Process: keys.Process{PID: 4121, Program: "orders-svc"}}, "pid 4121 (orders-svc)"},
		{Process{Process: keys.Process{Host: "web-7", PID: 4121}}, "web-7 pid 4121"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// On a cluster, the records of processes in several slots come back in
// one call (MGET would be refused with CROSSSLOT).
func TestProcessRecordsCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	ctx := t.Context()
	cc := cl.Client(t)
	var ids []string
	slots := map[int]bool{}
	for len(slots) < 3 {
		id := latchkeyShaped()
		k := keys.ProcessRecord(id[:36])
		if slots[keys.Slot(k)/5462] {
			continue // one per third of the slot range: a master each, as the cluster is formed
		}
		slots[keys.Slot(k)/5462] = true
		ids = append(ids, id)
		if err := cc.Set(ctx, k, `{"host":"h","pid":7,"program":"p","started":"2026-01-02T03:04:05Z"}`, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Del(context.Background(), k) })
	}
	got, err := processes(ctx, &conn{client: cc, server: "cluster"}, ids)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("processes across slots = %v, %v; want %d", got, err, len(ids))
	}
	for _, id := range ids {
		if p := got[id[:36]]; p.String() != "h pid 7 (p)" {
			t.Errorf("process %s = %q", id[:36], p)
		}
	}
}

// inspect names the process behind a latchkey holder and a latchkey
// waiter, in its table and in -json, and none behind a Redisson one.
func TestInspectShowsProcess(t *testing.T) {
	s := redistest.SharedServer(t)
	c := cli{bin: build(t), conn: []string{"-redis", s.Addr()}}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	lib := locktest.Client(t, s)
	name := testName(t, "process-inspect")
	m := mutex.New(lib, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(context.Background())
	m2 := mutex.New(locktest.Client(t, s), name)
	w := wait(m2.Lock, m2.Unlock)
	defer w.stop()
	queued(t, lib, namesOf(name).lock.Queue, 1)
	host, _ := os.Hostname()
	st := c.inspect(t, name)
	if len(st.Holders) != 1 || len(st.Queue) != 1 {
		t.Fatalf("inspect: %+v", st)
	}
	for _, p := range []*Process{st.Holders[0].Process, st.Queue[0].Process} {
		if p == nil || p.PID != os.Getpid() || p.Host != host {
			t.Errorf("process %+v, want pid %d on %s", p, os.Getpid(), host)
		}
	}
	table, _, _ := c.run(t, "inspect", name)
	if want := fmt.Sprintf("pid %d", os.Getpid()); strings.Count(table, want) != 2 {
		t.Errorf("inspect's table names the process %d times, want 2 (holder, waiter):\n%s", strings.Count(table, want), table)
	}

	java := testName(t, "process-java")
	lib.HSet(ctx, java, "6f1d2c3b-8a7e-4f10-9b2c-1d2e3f4a5b6c:1", 1)
	lib.PExpire(ctx, java, time.Minute)
	if st := c.inspect(t, java); len(st.Holders) != 1 || st.Holders[0].Process != nil {
		t.Errorf("a Redisson holder's process: %+v", st.Holders)
	}
}
