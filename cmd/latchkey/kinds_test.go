package main

import "testing"

func TestOwnerShaped(t *testing.T) {
	for f, want := range map[string]bool{
		"5b0e2a4c-3d8f-4c1e-9a7b-2f6d8e1c0a93:41":       true,
		"5b0e2a4c-3d8f-4c1e-9a7b-2f6d8e1c0a93:41:write": true,
		"mode":  false,
		"a:":    false,
		":1":    false,
		"a:b":   false,
		"name":  false,
		"x:1:2": true,
	} {
		if got := ownerShaped(f); got != want {
			t.Errorf("ownerShaped(%q) = %v, want %v", f, got, want)
		}
	}
}

func TestAuxiliary(t *testing.T) {
	for k, want := range map[string]bool{
		"orders":                           false,
		"redisson_lock_queue:{orders}":     true,
		"redisson_lock_token:{orders}":     true,
		"latchkey_lock_queue:{orders}":     true,
		"latchkey_once:{orders}:abc":       true,
		"{orders}:timeout":                 true,
		"{tag}orders:timeout":              true,
		"{orders}:5b0e:1:rwlock_timeout:1": true,
		"session:timeout":                  false,
	} {
		if got := auxiliary(k); got != want {
			t.Errorf("auxiliary(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestEntryOwner(t *testing.T) {
	for e, want := range map[string]string{
		"hub/uuid:1":        "uuid:1",
		"hub/uuid:1/call-7": "uuid:1",
		"plain":             "plain",
	} {
		if got := entryOwner(e); got != want {
			t.Errorf("entryOwner(%q) = %q, want %q", e, got, want)
		}
	}
}

func TestEntriesKind(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		entries []string
		want    string
	}{
		{nil, ""},
		{[]string{"redisson"}, ""},
		{[]string{"redisson", "hub/" + hex}, kindPermits},
		{[]string{"hub/" + hex + hex}, kindPermits},
		{[]string{"hub/2/key-1"}, kindSemaphore},
		{[]string{"hub/2/" + hex}, kindPermits},
		{[]string{"/1/" + hex}, kindPermits},
		{[]string{"hub/2/" + hex + hex}, kindSemaphore},
		{[]string{"hub/" + hex[:31]}, ""},
		{[]string{"hub/x/key"}, ""},
	} {
		if got := entriesKind(c.entries); got != c.want {
			t.Errorf("entriesKind(%q) = %q, want %q", c.entries, got, c.want)
		}
	}
}

// queueName reads back the name of every queue key keys.Prefix derives,
// tagged or not, and nothing else.
func TestQueueName(t *testing.T) {
	const p = "latchkey_lock_queue"
	for key, want := range map[string]string{
		p + ":{orders}":    "orders",
		p + ":{a}:b":       "{a}:b",
		p + ":x{a}":        "x{a}",
		p + ":{}":          "{}", // the name "{}", which has a brace: p:{} as it is
		p + ":orders":      "",
		"other:{orders}":   "",
		p + ":{a}b}":       "a}b",
		p + ":{{a}}":       "{{a}}",
		p + "x:{orders}":   "",
		p + ":{orders}:ab": "{orders}:ab",
	} {
		got, ok := queueName(p, false)(key)
		if !ok {
			got, ok = queueName(p, true)(key)
		}
		if ok != (want != "") || got != want {
			t.Errorf("queueName(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

func TestLivenessText(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		w    Waiter
		want string
	}{
		{Waiter{Client: "latchkey", InMs: 4000, Alive: true, Listening: &yes}, "alive, heartbeat lapses in 4s"},
		{Waiter{Client: "latchkey", InMs: -12300, LapsedMs: 12300}, "dead, heartbeat lapsed 12s ago"},
		{Waiter{Client: "redisson", InMs: 299000, Listening: &no}, "dead, not listening (deadline lapses in 4m59s)"},
		{Waiter{Client: "latchkey", InMs: 250, Alive: true}, "alive, heartbeat lapses in 250ms"},
	} {
		if got := deadline(c.w); got != c.want {
			t.Errorf("deadline(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}
