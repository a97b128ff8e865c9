package redistest

import "testing"

func TestSlot(t *testing.T) {
	for key, want := range map[string]int{
		"foo":        12182, // CLUSTER KEYSLOT foo
		"{foo}:bar":  12182,
		"x{foo}y{z}": 12182, // the first tag counts
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	// An empty or unclosed tag hashes the whole key.
	for _, key := range []string{"{}foo", "{foo"} {
		if Slot(key) != int(crc16(key)%slotCount) {
			t.Errorf("Slot(%q) = %d, want the slot of the whole key", key, Slot(key))
		}
	}
}
