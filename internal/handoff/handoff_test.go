package handoff_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

func body(token int64, server time.Time) string {
	return strconv.FormatInt(token, 10) + " " + strconv.FormatInt(server.UnixMicro(), 10)
}

// A grant is dated on our clock by the least bound on how far the server's
// clock is ahead, and trusted only while half the grace is left.
func TestClock_Grant(t *testing.T) {
	var c handoff.Clock
	now := time.Now()
	if _, _, ok := c.Grant(body(7, now)); ok {
		t.Fatal("an undated clock trusted a grant")
	}
	// The server's clock runs 1s ahead of ours: two attempts bound it by
	// 1.010s and 1.002s; the least bound dates grants.
	sent := now.Add(-time.Second)
	c.ServerTime(sent.Add(1010*time.Millisecond).UnixMicro(), sent)
	c.ServerTime(sent.Add(1002*time.Millisecond).UnixMicro(), sent)
	token, at, ok := c.Grant(body(7, now.Add(time.Second)))
	if !ok || token != 7 {
		t.Fatalf("Grant = %d, %v; want 7, trusted", token, ok)
	}
	if d := at.Sub(now.Add(-2 * time.Millisecond)); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("dated %v from now, want 2ms before: the server's clock less its least lead", at.Sub(now))
	}
	// A grant whose letter is older than half the grace is not trusted.
	if _, _, ok := c.Grant(body(8, now.Add(time.Second-handoff.Grace))); ok {
		t.Fatal("a grant made a grace ago was trusted")
	}
	for _, bad := range []string{"", "x 1", "1 x", "1"} {
		if _, _, ok := c.Grant(bad); ok {
			t.Errorf("Grant(%q) trusted", bad)
		}
	}
}

func TestTakeLetter(t *testing.T) {
	at := time.Now()
	if within, head := handoff.TakeLetter(body(1, at), at); within != 0 || head {
		t.Errorf("a grant: %v, %v; want an attempt at once, head unchanged", within, head)
	}
	within, head := handoff.TakeLetter("next", at)
	if !head || within < handoff.Grace || within > handoff.Grace+20*time.Millisecond {
		t.Errorf("next: %v, %v; want head, attempt after the grace", within, head)
	}
	if _, head := handoff.TakeLetter("", at); head {
		t.Error("an astray letter made the waiter the head")
	}
}

// A Place is the head after "next", and only the head attempts on
// Redisson's messages.
func TestPlace(t *testing.T) {
	p := wait.NewPlace("k", wait.Channel{Name: "redisson_sc:{s}", Need: 3})
	var _ wait.Mail = p
	var _ wait.Hint = p
	p.Rank = 2
	if now, _ := p.Heard(1); now {
		t.Fatal("a waiter behind the head attempted on Redisson's message")
	}
	if done, _ := p.Letter("next", time.Now()); done || p.Rank != 0 {
		t.Fatalf("after next: done %v, rank %d; want not done, head", done, p.Rank)
	}
	if now, _ := p.Heard(1); !now {
		t.Fatal("the head did not attempt on Redisson's message")
	}
	if done, within := p.Letter(body(1, time.Now()), time.Now()); done || within != 0 {
		t.Fatalf("a grant: %v, %v; want an attempt at once, never done on the letter alone", done, within)
	}
	if p.Key() != "k" || p.Channel().Need != 3 || !p.Active() || p.Expect() != 1 {
		t.Fatal("Place does not report what it was made with")
	}
}

func TestCounted(t *testing.T) {
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer single.Close()
	defer cluster.Close()
	for _, tc := range []struct {
		c    redis.UniversalClient
		pub  string
		want string
	}{{single, "PUBLISH", "1"}, {cluster, "SPUBLISH", "1"}, {cluster, "PUBLISH", "0"}} {
		if got := handoff.Counted(tc.c, tc.pub); got != tc.want {
			t.Errorf("Counted(%T, %s) = %s, want %s", tc.c, tc.pub, got, tc.want)
		}
	}
}
