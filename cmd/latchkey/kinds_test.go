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
