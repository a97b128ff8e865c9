package rt

import (
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// book returns a record book whose client has no server: its lanes' keys
// are only counted here, never deleted.
func book(t *testing.T) *recordBook {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, MinRetryBackoff: time.Second})
	b := newRecordBook(c)
	b.single = time.Second
	t.Cleanup(func() { b.close(); c.Close() })
	return b
}

// A record keeps its lane and stamp while any send of it is in flight, and
// gives the lane up, for a record after it to write over under a stamp of
// its own, once the last is answered at once.
func TestRecordBook_inFlight(t *testing.T) {
	b := book(t)
	rec := keys.Once("lane", "a:1")
	first := b.place(rec)
	if again := b.place(rec); again != first { // a send still on its way
		t.Fatalf("second send's lane %v, want the first's %v", again, first)
	}
	b.sent(rec, true, nil, 0)
	if again := b.place(rec); again != first {
		t.Fatalf("lane %v after one of two sends was answered, want %v", again, first)
	}
	b.sent(rec, true, nil, 0)
	b.sent(rec, true, nil, 0)
	next := b.place(keys.Once("lane", "a:2"))
	if next.key != first.key || next.stamp == first.stamp {
		t.Fatalf("next record's lane %v; want %s under a new stamp", next, first.key)
	}
}

// A record whose send failed or was answered late keeps its lane: the next
// record writes another.
func TestRecordBook_kept(t *testing.T) {
	for _, c := range []struct {
		why  string
		err  error
		took time.Duration
	}{{"failed", errors.New("reset"), 0}, {"late", nil, 2 * time.Second}} {
		b := book(t)
		rec := keys.Once("lane", "a:1")
		l := b.place(rec)
		b.sent(rec, true, c.err, c.took)
		b.place(rec)
		b.sent(rec, true, nil, 0) // answered at once, later
		if next := b.place(keys.Once("lane", "a:2")); next.key == l.key {
			t.Errorf("%s: the next record took the lane of one whose send %s", c.why, c.why)
		}
		if again := b.place(rec); again != l {
			t.Errorf("%s: the record sent again on %v, want its lane %v", c.why, again, l)
		}
	}
}

// The records of other primitives take lanes of their own, in their slots.
func TestRecordBook_lanesByName(t *testing.T) {
	b := book(t)
	a, other := keys.Once("a", "x:1"), keys.Once("b", "x:1")
	la := b.place(a)
	b.sent(a, true, nil, 0)
	lb := b.place(other)
	if la.key == lb.key || keys.Slot(lb.key) != keys.Slot(keys.Once("b", "y")) {
		t.Fatalf("lanes %s and %s for records of two names", la.key, lb.key)
	}
}

// Two clients' books never put records on one lane: a lane's stamps tell
// only one book's records apart.
func TestRecordBook_lanesByClient(t *testing.T) {
	a, b := book(t), book(t)
	ra, rb := keys.Once("lane", "a:1"), keys.Once("lane", "b:1")
	la, lb := a.place(ra), b.place(rb)
	if la.key == lb.key || la.stamp == lb.stamp {
		t.Fatalf("two clients' records on lanes %v and %v", la, lb)
	}
}

// A record whose send failed stays placed, for a retry or a resolve to
// find on its lane, under its stamp.
func TestRecordBook_failedStays(t *testing.T) {
	b := book(t)
	rec := keys.Once("lane", "a:1")
	l := b.place(rec)
	b.sent(rec, true, errors.New("reset"), 0)
	if again := b.place(rec); again != l {
		t.Fatalf("a failed request sent again on %v, want its lane %v", again, l)
	}
}
