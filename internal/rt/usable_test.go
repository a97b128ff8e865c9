package rt_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// awkward are names a caller may pass as data.
var awkward = []string{
	"", "a", "a}b", "{}x", "{x", "x{", "}", "{", "{}", "}{", "{{}}", "}{x}", "{x}", "{x}a}b",
	"a{b}c{d}", "order:{42}", "ünïcødé ✓", "a b\tc\n", strings.Repeat("x", 4096), strings.Repeat("x{", 512),
}

// together reports whether every key and channel derived from name lands in
// one hash slot: what a cluster needs.
func together(name string) bool {
	ks := []string{keys.Prefix("p", name), keys.Suffix(name, "s"), keys.Once(name, "id"), keys.LockChannel(name), keys.TokenKey(name)}
	for _, k := range ks {
		if keys.Slot(k) != keys.Slot(name) {
			return false
		}
	}
	return true
}

// never dialled: Usable does no I/O
func clients(t testing.TB) (plain, cluster redis.UniversalClient) {
	plain = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster = redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = plain.Close(); _ = cluster.Close() })
	return plain, cluster
}

func checkUsable(t *testing.T, plain, cluster redis.UniversalClient, name string) {
	if err := rt.Usable(context.Background(), name, plain); err != nil {
		t.Errorf("rt.Usable(%q, single server) = %v, want nil", name, err)
	}
	err := rt.Usable(context.Background(), name, cluster)
	if want := together(name); want != (err == nil) {
		t.Fatalf("rt.Usable(%q, cluster) = %v, but its keys together = %v", name, err, want)
	}
	if err == nil {
		return
	}
	if !errors.Is(err, lockerr.ErrCrossSlot) || !strings.Contains(err.Error(), "non-empty hash tag") {
		t.Errorf("rt.Usable(%q, cluster) = %v, want ErrCrossSlot saying how to fix the name", name, err)
	}
	if err2 := rt.Usable(context.Background(), name, plain, cluster); err2 == nil {
		t.Errorf("rt.Usable(%q, single server, cluster) = nil: one cluster client is enough to refuse", name)
	}
}

func TestUsable(t *testing.T) {
	plain, cluster := clients(t)
	for _, name := range awkward {
		checkUsable(t, plain, cluster, name)
	}
	if err := rt.Usable(context.Background(), "", cluster); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("rt.Usable(\"\", cluster) = %v, want it to say the name is empty", err)
	}
	if err := rt.Usable(context.Background(), "x"); err != nil {
		t.Errorf("Usable without clients = %v", err)
	}
}

// Usable refuses exactly the names whose keys a cluster would split.
func FuzzUsable(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	plain, cluster := clients(f)
	f.Fuzz(func(t *testing.T, name string) { checkUsable(t, plain, cluster, name) })
}

// The derivation of awkward names is Redisson's prefixName and suffixName,
// braces or not.
func TestAwkwardNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{keys.Prefix("p", ""), "p:{}"},
		{keys.Suffix("", "timeout"), "{}:timeout"},
		{keys.Prefix("p", "a}b"), "p:{a}b}"},
		{keys.Suffix("a}b", "timeout"), "{a}b}:timeout"},
		{keys.Prefix("p", "{x"), "p:{x"},
		{keys.Suffix("{x", "timeout"), "{x:timeout"},
		{keys.Prefix("p", "x{"), "p:x{"},
		{keys.Prefix("p", "{}x"), "p:{}x"},
		{keys.LatchChannel("{x}"), "redisson_countdownlatch__channel__{{x}}"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A Ring is refused whatever the name, before any I/O.
func TestUsable_ring(t *testing.T) {
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	if err := rt.Usable(context.Background(), "{fine}", ring); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "Ring") {
		t.Fatalf("Usable on a Ring = %v, want an error matching errors.ErrUnsupported that names the Ring", err)
	}
}
