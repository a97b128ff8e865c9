package keys

import "testing"

func TestNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{Prefix("redisson_lock__channel", "a"), "redisson_lock__channel:{a}"},
		{Prefix("redisson_lock__channel", "{x}:a"), "redisson_lock__channel:{x}:a"},
		{Suffix("a", "timeout"), "{a}:timeout"},
		{Suffix("{x}a", "timeout"), "{x}a:timeout"},
		{TokenKey("a"), "redisson_lock_token:{a}"},
		{LockChannel("a"), "redisson_lock__channel:{a}"},
		{Once("a", "id"), Prefix("latchkey_once", "a") + ":id"},
		{Once("{x}:a", "id"), Prefix("latchkey_once", "{x}:a") + ":id"},
		{Once("a:b", "u:7"), "latchkey_once:{a:b}:u.7"},
		{OnceLane(NewOnce("a:b"), ""), "latchkey_once:{a:b}:"},
		{OnceLane(NewOnce("{x}:a"), ""), "latchkey_once:{x}:a:"},
		{OnceLane(Once("a:b", "u:7"), "p.1"), "latchkey_once:{a:b}:p.1"},
		{OnceLane(OnceThen(Once("{x}:a", "u:7")), "p.1"), "latchkey_once:{x}:a:p.1"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSlot(t *testing.T) {
	// Reference values from Redis' CLUSTER KEYSLOT.
	cases := map[string]int{"foo": 12182, "bar": 5061, "{foo}bar": 12182, "123456789": 12739}
	for k, want := range cases {
		if got := Slot(k); got != want {
			t.Errorf("Slot(%q) = %d, want %d", k, got, want)
		}
	}
}

// A lock's keys, cut from one string, are each what Prefix makes, for a
// name with a hash tag and one without.
func TestLockOf(t *testing.T) {
	for _, name := range []string{"a", "{x}:a", "", "{"} {
		l := LockOf(name)
		got := []string{l.Token, l.Channel, l.Queue, l.Deadlines, l.Grant, l.Hubs, l.FairQueue, l.FairDeadlines,
			l.Heartbeats, l.FairToken, l.Forced}
		ps := []string{"redisson_lock_token", "redisson_lock__channel", "latchkey_lock_queue", "latchkey_lock_timeout",
			"latchkey_lock_grant", "latchkey_lock__channel", "redisson_lock_queue", "redisson_lock_timeout",
			"latchkey_lock_heartbeat", "latchkey_lock_token", "latchkey_lock__forced"}
		for i, p := range ps {
			if want := Prefix(p, name); got[i] != want {
				t.Errorf("LockOf(%q) key %d = %q, want %q", name, i, got[i], want)
			}
		}
		if l.Name != name || l.Token != TokenKey(name) || l.Channel != LockChannel(name) {
			t.Errorf("LockOf(%q) = %+v", name, l)
		}
	}
}

// Each record NewOnce makes is its own, and takes one allocation.
func TestNewOnce(t *testing.T) {
	if a, b := NewOnce("n"), NewOnce("n"); a == b {
		t.Fatalf("two records %q", a)
	}
	if n := testing.AllocsPerRun(100, func() { NewOnce("n") }); n != 1 {
		t.Errorf("NewOnce allocates %v times, want 1", n)
	}
}
