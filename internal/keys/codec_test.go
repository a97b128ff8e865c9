package keys

import "testing"

// Entries and letters read back as written, in the shapes the scripts
// write: a lock's entry with and without a call id, a semaphore's, a
// polling client's (no Hub), and Redisson's own entry, which is none.
func TestCodec(t *testing.T) {
	for _, c := range []struct {
		s       string
		permits bool
		want    Entry
		ok      bool
	}{
		{"h1/u:1", false, Entry{Hub: "h1", Key: "u:1"}, true},
		{"h1/u:1/call", false, Entry{Hub: "h1", Key: "u:1/call"}, true},
		{"/u:1", false, Entry{Key: "u:1"}, true},
		{"h1/3/k", true, Entry{Hub: "h1", N: 3, Key: "k"}, true},
		{"h1/0/k", true, Entry{}, false},
		{"redisson", false, Entry{}, false},
	} {
		e, ok := ParseEntry(c.s, c.permits)
		if ok != c.ok || e != c.want {
			t.Errorf("ParseEntry(%q) = %+v, %v; want %+v, %v", c.s, e, ok, c.want, c.ok)
		}
		if ok && e.String() != c.s {
			t.Errorf("Entry %+v writes %q, want %q", e, e.String(), c.s)
		}
	}
	if o := (Entry{Hub: "h", Key: "u:1/call"}).Owner(); o != "u:1" {
		t.Errorf("Owner = %q, want u:1", o)
	}
	if key, body, ok := ParseLetter("@u:1/c 42 1700000000000000"); !ok || key != "u:1/c" || body != "42 1700000000000000" {
		t.Errorf("ParseLetter = %q, %q, %v", key, body, ok)
	}
	if _, _, ok := ParseLetter("0"); ok {
		t.Error("Redisson's message read as a letter")
	}
	if what, micros, ok := ParseGrant("42 1700000000000000"); !ok || what != 42 || micros != 1700000000000000 {
		t.Errorf("ParseGrant = %d, %d, %v", what, micros, ok)
	}
	for _, body := range []string{"next", "turn", "", "x 1"} {
		if _, _, ok := ParseGrant(body); ok {
			t.Errorf("ParseGrant(%q) read a grant", body)
		}
	}
}
