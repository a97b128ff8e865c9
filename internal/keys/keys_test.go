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
