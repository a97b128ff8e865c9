package rt_test

import (
	"context"
	"errors"
	"os"
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

// gone waits up to d for key to be deleted, and reports whether it was.
func gone(c redis.UniversalClient, key string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if c.Exists(context.Background(), key).Val() == 0 {
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
		var recs []string
		for i := range 3 {
			w := takeOne(permits(t, c, "records"+string(rune('a'+i))), "req")
			if err := exec(ctx, c, take, w).Err(); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, w.Record)
		}
		for _, rec := range recs {
			if !gone(c, rec, 5*time.Second) {
				t.Errorf("record %s of an answered request still there after 5s", rec)
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

// A request whose send failed may have a copy on its way: its record
// stays, even when a later send of it is answered at once.
func TestRecords_failedSendKeepsRecord(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	ctx := context.Background()
	take := takeRecorded(t)
	w := takeOne(permits(t, c, "records-failed"), "req")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := exec(cancelled, c, take, w).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("send with an ended ctx: %v", err)
	}
	if err := exec(ctx, c, take, w).Err(); err != nil {
		t.Fatal(err)
	}
	if gone(c, w.Record, time.Second) {
		t.Fatal("the record of a request with a failed send was deleted")
	}
}

// A record that requests share (an acquisition's tries) stays: a later
// try may be on its way when an earlier one is answered.
func TestRecords_sharedRecordStays(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	w := takeOne(permits(t, c, "records-shared"), "req")
	w.Sole = false
	if err := exec(context.Background(), c, takeRecorded(t), w).Err(); err != nil {
		t.Fatal(err)
	}
	if gone(c, w.Record, time.Second) {
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
	w := takeOne(permits(t, c, "records-finished"), "req")
	w.Sole = false
	r := exec(ctx, c, take, w)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Record != w.Record || !r.Single {
		t.Fatalf("reply's record %q, single %v; want %q, true", r.Record, r.Single, w.Record)
	}
	if gone(c, w.Record, 500*time.Millisecond) {
		t.Fatal("a shared record went before its caller was done with it")
	}
	rt.Finished(c, r.Record)
	if !gone(c, w.Record, 5*time.Second) {
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

// A sole request sent again after its answer (which its callers never
// do, but a copy might still be on its way) keeps its record after all.
func TestRecords_sentAgainStays(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	ctx := context.Background()
	take := takeRecorded(t)
	w := takeOne(permits(t, c, "records-again"), "req")
	for range 2 {
		if err := exec(ctx, c, take, w).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if gone(c, w.Record, time.Second) {
		t.Fatal("the record of a request sent twice was deleted")
	}
}

// A client that go-redis resends on without a pause keeps every record.
func TestRecords_noPauseKeepsRecords(t *testing.T) {
	c := redistest.SharedServer(t).Client(t, func(o *redis.Options) { o.MinRetryBackoff = -1 })
	ctx := context.Background()
	w := takeOne(permits(t, c, "records-nopause"), "req")
	if err := exec(ctx, c, takeRecorded(t), w).Err(); err != nil {
		t.Fatal(err)
	}
	if gone(c, w.Record, time.Second) {
		t.Fatal("a record was deleted on a client that resends without a pause")
	}
}

// A record done with goes out with the client's next request to its slot,
// without waiting for a batch.
func TestRecords_takenAlong(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	ctx := context.Background()
	take := takeRecorded(t)
	name := permits(t, c, "records-along")
	first := takeOne(name, "first")
	if err := exec(ctx, c, take, first).Err(); err != nil {
		t.Fatal(err)
	}
	second := takeOne(name, "second")
	if err := exec(ctx, c, take, second).Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, first.Record).Val(); n != 0 {
		t.Error("the first request's record outlived the next request to its slot")
	}
	if n, _ := c.Get(ctx, name).Int(); n != 3 {
		t.Errorf("%d permits left after two takes of one, want 3", n)
	}
}

// exec sends req, a request of script s, on c's send path.
func exec(ctx context.Context, c redis.UniversalClient, s *scripts.Script, req scripts.Request) rt.Reply {
	req.Script = s
	return rt.Of(c).Sender(nil, 0).Send(ctx, req)
}
