package rt_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

func takeRecorded(t *testing.T) *scripts.Script {
	t.Helper()
	src, err := os.ReadFile("testdata/take_recorded.lua")
	if err != nil {
		t.Fatal(err)
	}
	return scripts.Compose("take_recorded", string(src))
}

// permits makes a counter of 5 permits for take_recorded, named after t
// and prefix, and returns its name.
func permits(t *testing.T, c redis.UniversalClient, prefix string) string {
	name := locktest.Name(t, prefix)
	c.Set(context.Background(), name, 5, time.Minute)
	return name
}

// takeOne is take_recorded's request for one of name's permits, recorded
// as id, which no other request shares.
func takeOne(name, id string) scripts.Request {
	return scripts.Request{Keys: []string{name}, Args: []any{1}, Record: keys.Once(name, id), Sole: true}
}

// lanes returns the keys that name's request records live on.
func lanes(t *testing.T, c redis.UniversalClient, name string) []string {
	t.Helper()
	ctx := context.Background()
	pattern := keys.Once(name, "*")
	var node redis.Cmdable = c
	if cc, ok := c.(*redis.ClusterClient); ok {
		n, err := cc.MasterForKey(ctx, pattern)
		if err != nil {
			t.Fatal(err)
		}
		node = n
	}
	ks, err := node.Keys(ctx, pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// gone waits up to d for name's request records to be deleted, and
// reports whether they were.
func gone(t *testing.T, c redis.UniversalClient, name string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if len(lanes(t, c, name)) == 0 {
			return true
		}
	}
	return false
}

// The record of a request answered at its only send is deleted within a
// batch's delay, on one server and on a cluster, whose batches are split
// by hash slot; a request's record that other requests' records share a
// batch with is not lost among them.
func TestRecords_answeredAreDeleted(t *testing.T) {
	check := func(t *testing.T, c redis.UniversalClient) {
		ctx := context.Background()
		take := takeRecorded(t)
		var names []string
		for i := range 3 {
			name := permits(t, c, "records"+string(rune('a'+i)))
			if err := exec(ctx, c, take, takeOne(name, "req")).Err(); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		for _, name := range names {
			if !gone(t, c, name, 5*time.Second) {
				t.Errorf("record of an answered request on %s still there after 5s", name)
			}
		}
	}
	// The clients pause a second before a resend, so that a loaded
	// machine's slow answers (a cluster client's first loads the slot map)
	// still count as single.
	t.Run("server", func(t *testing.T) {
		check(t, redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff, o.MaxRetryBackoff = time.Second, 2*time.Second }))
	})
	t.Run("cluster", func(t *testing.T) {
		check(t, redistest.SharedCluster(t).Client(t, func(o *redis.ClusterOptions) { o.MinRetryBackoff, o.MaxRetryBackoff = time.Second, 2*time.Second }))
	})
}

// Requests one after another write their records over one lane, and a
// record left there by the one before is not taken for the next one's:
// each applies, and answers as it applied.
func TestRecords_laneWrittenOver(t *testing.T) {
	c := redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff, o.MaxRetryBackoff = time.Second, 2*time.Second })
	ctx := context.Background()
	take := takeRecorded(t)
	name := permits(t, c, "records-lane")
	var seen []string
	for i, want := range []int64{4, 3, 2} {
		vs, err := scripts.Ints(exec(ctx, c, take, takeOne(name, "req"+string(rune('a'+i)))).Cmd)
		if err != nil || len(vs) != 2 || vs[0] != 1 || vs[1] != want {
			t.Fatalf("take #%d = %v, %v; want [1 %d]: a request took the record before it for its own", i+1, vs, err, want)
		}
		seen = append(seen, lanes(t, c, name)...)
	}
	if slices.Sort(seen); len(slices.Compact(seen)) != 1 {
		t.Errorf("three requests one after another wrote %d lanes, want 1: %v", len(slices.Compact(seen)), seen)
	}
}

// A request whose send failed may have a copy on its way: its record
// keeps its lane, even when a later send of it is answered at once, and
// the next request writes another. The request resent still answers from
// its record.
func TestRecords_failedSendKeepsRecord(t *testing.T) {
	c := redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff, o.MaxRetryBackoff = time.Second, 2*time.Second })
	ctx := context.Background()
	take := takeRecorded(t)
	name := permits(t, c, "records-failed")
	w := takeOne(name, "req")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := exec(cancelled, c, take, w).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("send with an ended ctx: %v", err)
	}
	if err := exec(ctx, c, take, w).Err(); err != nil {
		t.Fatal(err)
	}
	if err := exec(ctx, c, take, takeOne(name, "next")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := exec(ctx, c, take, w).Err(); err != nil { // a copy on its way
		t.Fatal(err)
	}
	if n, _ := c.Get(ctx, name).Int(); n != 3 {
		t.Errorf("%d permits left after two requests of one, one of them sent again; want 3", n)
	}
	time.Sleep(3 * rt.DropDelay)
	if ls := lanes(t, c, name); len(ls) != 1 {
		t.Fatalf("lanes %v after the next request's went; want the failed request's alone", ls)
	}
}

// A record that requests share (an acquisition's tries) stays: a later
// try may be on its way when an earlier one is answered.
func TestRecords_sharedRecordStays(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	name := permits(t, c, "records-shared")
	w := takeOne(name, "req")
	w.Sole = false
	if err := exec(context.Background(), c, takeRecorded(t), w).Err(); err != nil {
		t.Fatal(err)
	}
	if gone(t, c, name, time.Second) {
		t.Fatal("a record that requests share was deleted")
	}
}

// A shared record (an acquisition's) goes once its caller is done with
// it, when each of its sends was single; a send that failed keeps it.
// The client pauses 500ms before a resend, so that a loaded machine's
// slow answers still count as single.
func TestRecords_finished(t *testing.T) {
	c := redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff, o.MaxRetryBackoff = 500*time.Millisecond, time.Second })
	ctx := context.Background()
	take := takeRecorded(t)
	name := permits(t, c, "records-finished")
	w := takeOne(name, "req")
	w.Sole = false
	r := exec(ctx, c, take, w)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Record != w.Record || !r.Single {
		t.Fatalf("reply's record %q, single %v; want %q, true", r.Record, r.Single, w.Record)
	}
	if gone(t, c, name, 500*time.Millisecond) {
		t.Fatal("a shared record went before its caller was done with it")
	}
	rt.Finished(c, r.Record)
	if !gone(t, c, name, 5*time.Second) {
		t.Error("a finished record still there after 5s")
	}

	failed := takeOne(permits(t, c, "records-finished-failed"), "req")
	failed.Sole = false
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if r := exec(cancelled, c, take, failed); r.Single || r.Record != failed.Record {
		t.Errorf("a failed send's reply: record %q, single %v; want %q, false", r.Record, r.Single, failed.Record)
	}
}

// A client that go-redis resends on without a pause keeps every record.
func TestRecords_noPauseKeepsRecords(t *testing.T) {
	c := redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff = -1 })
	ctx := context.Background()
	name := permits(t, c, "records-nopause")
	if err := exec(ctx, c, takeRecorded(t), takeOne(name, "req")).Err(); err != nil {
		t.Fatal(err)
	}
	if gone(t, c, name, time.Second) {
		t.Fatal("a record was deleted on a client that resends without a pause")
	}
}

// exec sends req, a request of script s, on c's send path.
func exec(ctx context.Context, c redis.UniversalClient, s *scripts.Script, req scripts.Request) rt.Reply {
	req.Script = s
	return rt.Of(c).Sender(nil, 0).Send(ctx, req)
}
