package rt_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// recordKey is this test process's record.
var recordKey = keys.ProcessRecord(owner.Process())

// within waits up to 10s for cond, which a loaded machine's scheduling
// may need, and fails t with what if it never holds.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
	}
}

// lockOnce takes and gives back a lock called name through c.
func lockOnce(t *testing.T, c redis.UniversalClient, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	m := mutex.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock(%s) = %v", name, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(%s) = %v", name, err)
	}
}

// The record is written on the client's first lock, in the background: the
// lock returns while the write is held back, and sends exactly the
// commands that a client without the record sends; the record then holds
// this process's host, pid and program, with its TTL.
func TestProcess_firstLockWritesRecord(t *testing.T) {
	s := redistest.SharedServer(t)
	admin := s.Client(t)
	ctx := t.Context()
	admin.Del(ctx, recordKey)
	lockOnce(t, s.Client(t), t.Name()+":warm") // the scripts are loaded: neither client below meets NOSCRIPT

	// A client with the record off: the commands of a first lock.
	quiet := s.Client(t)
	qr := newRecorder(recordKey, false)
	quiet.AddHook(qr)
	latchkey.SetProcessRecord(quiet, false)
	defer latchkey.Close(quiet)
	qm := mutex.New(quiet, t.Name()+":quiet")
	if err := qm.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	quietSent := qr.Others()
	if err := qm.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if w := qr.Writes(); len(w) != 0 {
		t.Fatalf("a client with the record off wrote it %d times", len(w))
	}

	c := s.Client(t)
	r := newRecorder(recordKey, true)
	c.AddHook(r)
	defer latchkey.Close(c)
	opened := false
	defer func() {
		if !opened {
			close(r.gate) // let the held write go, so that Close ends
		}
	}()
	m := mutex.New(c, t.Name())
	lockCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.Lock(lockCtx); err != nil {
		t.Fatalf("first Lock, its record write held back = %v: the lock waited for the record", err)
	}
	sent := r.Others()
	select {
	case <-r.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first Lock fired no record write")
	}
	if len(r.Writes()) != 0 {
		t.Fatal("the record write finished while held back")
	}
	if !slices.Equal(sent, quietSent) {
		t.Errorf("the first Lock sent %v, a client without the record %v: the record added to the lock's path", sent, quietSent)
	}
	close(r.gate)
	opened = true
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	within(t, "the record was not written", func() bool { return len(r.Writes()) > 0 })
	if err := r.Writes()[0]; err != nil {
		t.Fatalf("the record write = %v", err)
	}

	raw, err := admin.Get(ctx, recordKey).Result()
	if err != nil {
		t.Fatalf("GET %s = %v", recordKey, err)
	}
	var got keys.Process
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("record %q: %v", raw, err)
	}
	host, _ := os.Hostname()
	if got.Host != host || got.PID != os.Getpid() || got.Program != filepath.Base(os.Args[0]) ||
		got.Started.IsZero() || got.Started.After(time.Now()) {
		t.Errorf("record %+v; want host %q, pid %d, a program and a start", got, host, os.Getpid())
	}
	if ttl := admin.PTTL(ctx, recordKey).Val(); ttl <= 0 || ttl > keys.ProcessTTL {
		t.Errorf("record TTL %v, want (0, %v]", ttl, keys.ProcessTTL)
	}
	if got != keys.Self() {
		t.Errorf("record %+v, want Self() = %+v", got, keys.Self())
	}
}

// The record is rewritten before its TTL ends for as long as the client is
// open, whether or not the process calls latchkey, and no longer after
// Close: it then lapses.
func TestProcess_refreshedUntilClose(t *testing.T) {
	const ttl, every = 600 * time.Millisecond, 100 * time.Millisecond
	defer rt.SetTiming(ttl, every)()
	s := redistest.SharedServer(t)
	admin := s.Client(t)
	ctx := t.Context()
	c := s.Client(t)
	r := newRecorder(recordKey, false)
	c.AddHook(r)
	lockOnce(t, c, t.Name())
	// Five writes span more than the TTL of the first: the record is still
	// there, with a TTL that was set again.
	within(t, "the record was not rewritten", func() bool { return len(r.Writes()) >= 8 })
	for i, err := range r.Writes() {
		if err != nil {
			t.Fatalf("write %d = %v", i, err)
		}
	}
	if pttl := admin.PTTL(ctx, recordKey).Val(); pttl <= 0 || pttl > ttl {
		t.Fatalf("record PTTL %v while refreshed, want (0, %v]", pttl, ttl)
	}
	if err := latchkey.Close(c); err != nil {
		t.Fatal(err)
	}
	n := len(r.Writes())
	within(t, "the record outlived Close by more than its TTL", func() bool { return admin.Exists(ctx, recordKey).Val() == 0 })
	if got := len(r.Writes()); got != n {
		t.Errorf("%d record writes after Close", got-n)
	}
}

// A user whose ACL does not grant the record's key locks as well as any:
// the write is refused with NOPERM once, and never tried again by that
// client, however long it goes on locking.
func TestProcess_noPermTriedOnce(t *testing.T) {
	defer rt.SetTiming(time.Second, 20*time.Millisecond)()
	s := redistest.SharedServer(t)
	admin := s.Client(t)
	ctx := t.Context()
	const user, password = "process-noperm", "process-noperm-password"
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "reset", "on", ">"+password, "+@all", "~noperm:*", "~*{noperm:*", "&*").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "ACL", "DELUSER", user)
	c := s.Client(t, func(o *redis.Options) { o.Username, o.Password = user, password })
	r := newRecorder(recordKey, false)
	c.AddHook(r)
	defer latchkey.Close(c)
	lockOnce(t, c, "noperm:"+t.Name())
	within(t, "the record write was not tried", func() bool { return len(r.Writes()) > 0 })
	if err := r.Writes()[0]; !redis.IsPermissionError(err) {
		t.Fatalf("the record write = %v, want NOPERM", err)
	}
	// Ten locks, and twenty of the writer's periods, later: no other try.
	deadline := time.Now().Add(400 * time.Millisecond)
	for i := 0; i < 10 || time.Now().Before(deadline); i++ {
		lockOnce(t, c, "noperm:"+t.Name())
	}
	if w := r.Writes(); len(w) != 1 {
		t.Errorf("the record write was tried %d times, want once: %v", len(w), w)
	}
}

// A client with the record off before its first call writes nothing;
// turned back on, it writes.
func TestProcess_off(t *testing.T) {
	defer rt.SetTiming(time.Second, 20*time.Millisecond)()
	s := redistest.SharedServer(t)
	c := s.Client(t)
	r := newRecorder(recordKey, false)
	c.AddHook(r)
	defer latchkey.Close(c)
	latchkey.SetProcessRecord(c, false)
	deadline := time.Now().Add(200 * time.Millisecond)
	for i := 0; i < 3 || time.Now().Before(deadline); i++ {
		lockOnce(t, c, t.Name())
	}
	if w := r.Writes(); len(w) != 0 {
		t.Fatalf("the record, turned off, was written %d times", len(w))
	}
	latchkey.SetProcessRecord(c, true)
	lockOnce(t, c, t.Name())
	within(t, "the record, turned back on, was not written", func() bool { return len(r.Writes()) > 0 })
}

// A client of a read-only replica has its record write refused with
// READONLY once, and never tries again, whatever its calls do.
func TestProcess_readOnlyTriedOnce(t *testing.T) {
	defer rt.SetTiming(time.Second, 20*time.Millisecond)()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := replica.Client(t)
	r := newRecorder(recordKey, false)
	c.AddHook(r)
	defer latchkey.Close(c)
	m := mutex.New(c, t.Name())
	lock := func() {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if err := m.Lock(ctx); err == nil {
			t.Fatal("Lock on a read-only replica succeeded")
		}
	}
	lock()
	within(t, "the record write was not tried", func() bool { return len(r.Writes()) > 0 })
	if err := r.Writes()[0]; !redis.IsReadOnlyError(err) {
		t.Fatalf("the record write = %v, want READONLY", err)
	}
	for range 3 {
		lock()
	}
	if w := r.Writes(); len(w) != 1 {
		t.Errorf("the record write was tried %d times, want once: %v", len(w), w)
	}
}
