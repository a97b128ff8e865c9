package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestNameSeq(t *testing.T) {
	for key, want := range map[string]int64{
		"latchkey_once:bench:{scale:latchkey:12}:abc":         12,
		"redisson_unlock_latch:bench:{load:redisson:3}:00ff":  3,
		"latchkey_once:bench:{watchdog:latchkey:7}:41:abc":    7,
		"latchkey_once:{orders}:abc":                          -1,
		"latchkey_once:bench:no-tag":                          -1,
		"redisson_unlock_latch:bench:{load:redisson:x}:00ff":  -1,
		"redisson_unlock_latch:bench:{load:redisson:9:00ff":   -1,
		"redisson_unlock_latch:bench:{load:redisson:9}}:00ff": 9,
	} {
		got, ok := nameSeq(key)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("nameSeq(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestCountRecords counts the records of one run among others' keys, and
// estimates the memory of many from a sample.
func TestCountRecords(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()
	env := &Env{Controls: []*redis.Client{c}}
	set := func(key string) {
		if err := c.Set(ctx, key, "n1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set("latchkey_once:bench:{uncontended:latchkey:5}:a")   // this run's
	set("latchkey_once:bench:{uncontended:latchkey:2}:b")   // an earlier run's
	set("redisson_unlock_latch:bench:{scale:redisson:6}:c") // this run's
	set("redisson_unlock_latch:bench:{scale:redisson:3}:d") // the run's seq0: earlier
	set("bench:{uncontended:latchkey:5}")                   // not a record
	set("latchkey_once:orders:e")                           // not the bench's
	rs, err := countRecords(ctx, env, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Once.Keys != 1 || rs.Latches.Keys != 1 || rs.keys() != 2 || rs.Sampled {
		t.Errorf("records %+v, want one of each", rs)
	}
	if rs.Once.Bytes <= 0 || rs.Latches.Bytes <= 0 {
		t.Errorf("memory %+v, want some", rs)
	}
	for i := range 3 * memoryAll {
		set(fmt.Sprintf("latchkey_once:bench:{scale:latchkey:9}:%d", i))
	}
	many, err := countRecords(ctx, env, 3)
	if err != nil {
		t.Fatal(err)
	}
	if many.Once.Keys != 3*memoryAll+1 || !many.Sampled {
		t.Fatalf("records %+v, want %d sampled", many.Once, 3*memoryAll+1)
	}
	if per := many.Once.Bytes / many.Once.Keys; per < rs.Once.Bytes/2 || per > rs.Once.Bytes*2 {
		t.Errorf("estimated %.0f bytes per record, measured %.0f for one", per, rs.Once.Bytes)
	}
}

func TestMeanRecords(t *testing.T) {
	if meanRecords([]*RecordStats{nil, nil}) != nil {
		t.Error("no counts should give nil")
	}
	a := &RecordStats{Once: keyCount{Keys: 4, Bytes: 400}, Latches: keyCount{Keys: 2, Bytes: 200}}
	b := &RecordStats{Once: keyCount{Keys: 2, Bytes: 200}, Latches: keyCount{Keys: 0, Bytes: -1}, Sampled: true}
	m := meanRecords([]*RecordStats{a, nil, b})
	if m.Once.Keys != 3 || m.Once.Bytes != 300 || m.Latches.Keys != 1 || m.Latches.Bytes != -1 || !m.Sampled {
		t.Errorf("mean %+v", m)
	}
	if m.keys() != 4 || m.bytes() != -1 {
		t.Errorf("keys %v, bytes %v", m.keys(), m.bytes())
	}
	var none *RecordStats
	if none.keys() != -1 || none.bytes() != -1 {
		t.Error("nil records should be unknown")
	}
}

// TestRecordsTarget evaluates issue 18's records target: latchkey's
// records against a tenth of Redisson's latches, in the same scenario.
func TestRecordsTarget(t *testing.T) {
	g := goal{scenario: "scale", impl: targetImpl, metric: mRecMem, bound: 0.1, versus: []string{"redisson"}}
	mk := func(impl string, once, latch float64) *Result {
		return &Result{Scenario: "scale", Impl: impl, Acquisitions: 1,
			Records: &RecordStats{Once: keyCount{Keys: 1, Bytes: once}, Latches: keyCount{Keys: 1, Bytes: latch}}}
	}
	red := mk("redisson", 0, 2000)
	for once, want := range map[float64]string{0: "PASS", 150: "PASS", 250: "MISS"} {
		if got := g.eval([]*Result{mk(targetImpl, once, 0), red}).Status; got != want {
			t.Errorf("records of %v bytes: %s, want %s", once, got, want)
		}
	}
	if got := g.eval([]*Result{{Scenario: "scale", Impl: targetImpl, Acquisitions: 1}, red}).Status; got != "n/a" {
		t.Errorf("unknown records: %s, want n/a", got)
	}
}
